import * as cborg from 'cborg';

/**
 * bbs-2023 proof values (W3C Data Integrity BBS Cryptosuites v1.0, §3.3.1–3.3.6): multibase
 * base64url ("u") of a three-byte CBOR tag header followed by a CBOR array. Only the baseline
 * feature is supported; the holder-binding and pseudonym variants carry other headers.
 */
const BASE_HEADER = Uint8Array.of(0xd9, 0x5d, 0x02);
const DERIVED_HEADER = Uint8Array.of(0xd9, 0x5d, 0x03);
const OTHER_FEATURES = new Set([0x04, 0x05, 0x06, 0x07, 0x08, 0x09]);

export interface BaseProofValue {
  bbsSignature: Uint8Array;
  bbsHeader: Uint8Array;
  publicKey: Uint8Array;
  hmacKey: Uint8Array;
  mandatoryPointers: string[];
}

export interface DerivedProofValue {
  bbsProof: Uint8Array;
  /** Canonical blank node label (c14nN) → HMAC-shuffled label (bN). */
  labelMap: Map<string, string>;
  mandatoryIndexes: number[];
  selectiveIndexes: number[];
  presentationHeader: Uint8Array;
}

/** A proof value that cannot be read; the message says what is wrong with it. */
export class ProofValueError extends Error {
  override readonly name = 'ProofValueError';
}

// Some encoders write byte strings as tag 64 (a typed array of uint8) instead of major type 2.
const TAGS: cborg.TagDecoder[] = [];
TAGS[64] = (bytes: Uint8Array) => bytes;

function decode(proofValue: unknown, header: Uint8Array, kind: string): unknown[] {
  if (typeof proofValue !== 'string' || !/^u[A-Za-z0-9_-]+$/.test(proofValue)) {
    throw new ProofValueError('proofValue must be a multibase base64url ("u…") string');
  }
  const bytes = new Uint8Array(Buffer.from(proofValue.slice(1), 'base64url'));
  if (bytes[0] !== header[0] || bytes[1] !== header[1]) {
    throw new ProofValueError('proofValue is not a bbs-2023 proof value');
  }
  if (bytes[2] !== header[2]) {
    if (OTHER_FEATURES.has(bytes[2]!)) {
      throw new ProofValueError(
        'proofValue uses a bbs-2023 feature (holder binding or pseudonyms) Coffer does not support',
      );
    }
    throw new ProofValueError(`proofValue is not a ${kind} proof value`);
  }
  let payload: unknown;
  try {
    payload = cborg.decode(bytes.subarray(header.length), { useMaps: true, tags: TAGS });
  } catch (error) {
    throw new ProofValueError(`proofValue is not valid CBOR (${(error as Error).message})`);
  }
  if (!Array.isArray(payload) || payload.length !== 5) {
    throw new ProofValueError(`proofValue must hold the five components of a ${kind} proof`);
  }
  return payload;
}

const isBytes = (value: unknown, length?: number): value is Uint8Array =>
  value instanceof Uint8Array && (length === undefined || value.length === length);
const isIndexList = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((i) => Number.isSafeInteger(i) && i >= 0);

export function parseBaseProofValue(proofValue: unknown): BaseProofValue {
  const [bbsSignature, bbsHeader, publicKey, hmacKey, mandatoryPointers] = decode(
    proofValue,
    BASE_HEADER,
    'base',
  );
  if (!isBytes(bbsSignature, 80)) throw new ProofValueError('the BBS signature must be 80 bytes');
  if (!isBytes(bbsHeader, 64)) throw new ProofValueError('the BBS header must be 64 bytes');
  if (!isBytes(publicKey, 96)) throw new ProofValueError('the public key must be 96 bytes');
  if (!isBytes(hmacKey, 32)) throw new ProofValueError('the HMAC key must be 32 bytes');
  if (!Array.isArray(mandatoryPointers) || !mandatoryPointers.every((p) => typeof p === 'string')) {
    throw new ProofValueError('the mandatory pointers must be a list of strings');
  }
  return { bbsSignature, bbsHeader, publicKey, hmacKey, mandatoryPointers };
}

export function serializeBaseProofValue(value: BaseProofValue): string {
  const payload = [
    value.bbsSignature,
    value.bbsHeader,
    value.publicKey,
    value.hmacKey,
    value.mandatoryPointers,
  ];
  return multibase(BASE_HEADER, cborg.encode(payload));
}

export function parseDerivedProofValue(proofValue: unknown): DerivedProofValue {
  const [bbsProof, compressed, mandatoryIndexes, selectiveIndexes, presentationHeader] = decode(
    proofValue,
    DERIVED_HEADER,
    'derived',
  );
  if (!isBytes(bbsProof)) throw new ProofValueError('the BBS proof must be a byte string');
  if (!(compressed instanceof Map)) throw new ProofValueError('the label map must be a CBOR map');
  const labelMap = new Map<string, string>();
  for (const [from, to] of compressed) {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < 0) {
      throw new ProofValueError('the label map must map label numbers to label numbers');
    }
    labelMap.set(`c14n${from}`, `b${to}`);
  }
  if (!isIndexList(mandatoryIndexes)) throw new ProofValueError('mandatory indexes must be whole numbers');
  if (!isIndexList(selectiveIndexes)) throw new ProofValueError('selective indexes must be whole numbers');
  if (!isBytes(presentationHeader))
    throw new ProofValueError('the presentation header must be a byte string');
  return { bbsProof, labelMap, mandatoryIndexes, selectiveIndexes, presentationHeader };
}

export function serializeDerivedProofValue(value: DerivedProofValue): string {
  const compressed = new Map<number, number>();
  for (const [from, to] of value.labelMap) {
    compressed.set(Number(from.slice('c14n'.length)), Number(to.slice('b'.length)));
  }
  const payload = [
    value.bbsProof,
    compressed,
    value.mandatoryIndexes,
    value.selectiveIndexes,
    value.presentationHeader,
  ];
  return multibase(DERIVED_HEADER, cborg.encode(payload));
}

function multibase(header: Uint8Array, payload: Uint8Array): string {
  return `u${Buffer.concat([header, payload]).toString('base64url')}`;
}
