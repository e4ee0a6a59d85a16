import type { KeyObject } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { compactVerify, decodeProtectedHeader } from 'jose';
import type { SecuredDocument } from '../formats/ldp-vc/bbs-2023/shared.ts';
import type { StatusOutcome } from './status-list-shared.ts';
import {
  CLOCK_SKEW_MS,
  COMPACT_JWS,
  checkNotExpired,
  decompress,
  LIST_ALGORITHMS,
  StatusListError,
  timeOf,
} from './status-list-shared.ts';

/**
 * W3C Bitstring Status List v1.0: a BitstringStatusListCredential, secured as a VC-JWT by a jose
 * issuer or with a bbs-2023 base proof by an ldp_vc issuer, whose `encodedList` is the
 * GZIP-compressed bitstring (index 0 is the most significant bit of the first byte).
 */

export const BITSTRING_LIST_ACCEPT =
  'application/vc+jwt, application/vc+ld+json, application/ld+json, application/json';

export interface BitstringStatusList {
  list: 'bitstring';
  purposes: string[];
  bytes: Uint8Array;
  /** The earliest of `validUntil` and the JWT's `exp`, in ms; null when neither is set. */
  expiresAt: number | null;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const includes = (value: unknown, wanted: string) =>
  (Array.isArray(value) ? value : [value]).includes(wanted);
const idOf = (value: unknown) => (isObject(value) ? value['id'] : value);

/** A VC-JWT: VC 2.0's `application/vc+jwt` is the credential itself; VC 1.1 puts it under `vc`. */
export async function openListJwt(
  body: string,
  key: KeyObject,
): Promise<{ credential: Json; exp: number | null }> {
  const jws = body.trim();
  if (!COMPACT_JWS.test(jws)) throw new StatusListError('the status list is not a VC-JWT');
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(jws).alg;
  } catch {
    throw new StatusListError('the status list is not a VC-JWT');
  }
  if (typeof alg !== 'string' || !LIST_ALGORITHMS.includes(alg)) {
    throw new StatusListError(`the status list is signed with ${String(alg)}, which Coffer does not accept`);
  }
  let payload: unknown;
  try {
    const verified = await compactVerify(jws, key, { algorithms: [alg] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    throw new StatusListError("the status list's signature does not verify with the issuer's key");
  }
  if (!isObject(payload)) throw new StatusListError('the status list is not a VC-JWT');
  const credential = isObject(payload['vc']) ? payload['vc'] : payload;
  return { credential, exp: timeOf(payload['exp'], 'exp') };
}

/** A JSON credential with a bbs-2023 base proof by `issuer`'s key. */
export async function openListDocument(
  body: string,
  issuer: string,
  publicKey: Uint8Array,
  verifyBaseProof: (document: SecuredDocument, key: Uint8Array) => Promise<{ ok: boolean; reason?: string }>,
): Promise<Json> {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    throw new StatusListError('the status list is not JSON');
  }
  if (!isObject(document) || !isObject(document['proof'])) {
    throw new StatusListError('the status list is not a credential with a proof');
  }
  if (idOf(document['issuer']) !== issuer) {
    throw new StatusListError(`the status list is issued by ${String(idOf(document['issuer']))}`);
  }
  if (document['proof']['proofPurpose'] !== 'assertionMethod') {
    throw new StatusListError("the status list's proof purpose is not assertionMethod");
  }
  let check: { ok: boolean; reason?: string };
  try {
    check = await verifyBaseProof(document as SecuredDocument, publicKey);
  } catch {
    check = { ok: false };
  }
  if (!check.ok) {
    throw new StatusListError(
      `the status list's proof does not verify with the issuer's key${check.reason ? ` (${check.reason})` : ''}`,
    );
  }
  return document;
}

/** The list a verified credential holds, if it is a current BitstringStatusListCredential for `uri`. */
export function readListCredential(
  credential: Json,
  uri: string,
  exp: number | null,
  now: Date,
): BitstringStatusList {
  if (!includes(credential['type'], 'BitstringStatusListCredential')) {
    throw new StatusListError('the status list is not a BitstringStatusListCredential');
  }
  // Another list of the same issuer, served in place of this one, must not pass for it.
  if (credential['id'] !== undefined && credential['id'] !== uri) {
    throw new StatusListError(`the status list is ${String(credential['id'])}`);
  }
  const validFrom = timeOf(credential['validFrom'], 'validFrom');
  if (validFrom !== null && validFrom > now.getTime() + CLOCK_SKEW_MS) {
    throw new StatusListError(`the status list is not valid before ${new Date(validFrom).toISOString()}`);
  }
  const times = [timeOf(credential['validUntil'], 'validUntil'), exp].filter((time) => time !== null);
  const expiresAt = times.length > 0 ? Math.min(...times) : null;
  checkNotExpired(expiresAt, now);
  const subject = credential['credentialSubject'];
  if (!isObject(subject) || !includes(subject['type'], 'BitstringStatusList')) {
    throw new StatusListError('the status list has no BitstringStatusList subject');
  }
  const purposes = Array.isArray(subject['statusPurpose'])
    ? subject['statusPurpose']
    : [subject['statusPurpose']];
  if (!purposes.every((purpose) => typeof purpose === 'string')) {
    throw new StatusListError('the status list has no statusPurpose');
  }
  // Older drafts put the status size on the list; a list of wider statuses is not read bit by bit.
  if (subject['statusSize'] !== undefined && subject['statusSize'] !== 1) {
    throw new StatusListError(`the status list has ${String(subject['statusSize'])} bits per status`);
  }
  const encoded = subject['encodedList'];
  if (typeof encoded !== 'string' || !encoded.startsWith('u')) {
    throw new StatusListError('the status list has no encodedList (multibase base64url)');
  }
  return {
    list: 'bitstring',
    purposes,
    bytes: decompress(Buffer.from(encoded.slice(1), 'base64url'), gunzipSync, 'encodedList'),
    expiresAt,
  };
}

/** The bit at `index` read for the entry's purpose: set means revoked or suspended. */
export function bitstringStatusAt(list: BitstringStatusList, index: number, purpose: string): StatusOutcome {
  if (!list.purposes.includes(purpose)) {
    return { state: 'unknown', reason: `the status list is for ${list.purposes.join(', ')}, not ${purpose}` };
  }
  const byte = list.bytes[Math.floor(index / 8)];
  if (byte === undefined) return { state: 'unknown', reason: `the status list has no entry ${index}` };
  const set = ((byte >> (7 - (index % 8))) & 1) === 1;
  if (purpose === 'revocation') return { state: set ? 'revoked' : 'valid' };
  if (purpose === 'suspension') return { state: set ? 'suspended' : 'valid' };
  return { state: 'unknown', reason: `Coffer does not read status purpose ${purpose}` };
}
