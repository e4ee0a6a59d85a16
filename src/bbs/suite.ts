/**
 * The BBS interface Coffer programs against: the argument and result shapes of
 * @digitalbazaar/bbs-signatures with the ciphersuite fixed to BLS12-381-SHA-256, so the fast core
 * and the stock library are interchangeable behind it.
 *
 * Verification resolves to false for any invalid or malformed signature, proof, public key or
 * index set, and rejects (TypeError) only for arguments of the wrong type.
 */
export interface BbsSuite {
  generateKeyPair(args?: { seed?: Uint8Array }): Promise<{ secretKey: Uint8Array; publicKey: Uint8Array }>;
  secretKeyToPublicKey(args: { secretKey: Uint8Array }): Promise<Uint8Array>;
  sign(args: {
    secretKey: Uint8Array;
    publicKey?: Uint8Array;
    header: Uint8Array;
    messages: Uint8Array[];
  }): Promise<Uint8Array>;
  verifySignature(args: {
    publicKey: Uint8Array;
    signature: Uint8Array;
    header: Uint8Array;
    messages: Uint8Array[];
  }): Promise<boolean>;
  deriveProof(args: {
    publicKey: Uint8Array;
    signature: Uint8Array;
    header: Uint8Array;
    messages: Uint8Array[];
    presentationHeader: Uint8Array;
    disclosedMessageIndexes: number[];
    /** What verifySignatureKeepingBase returned for this signature; suites without it ignore it. */
    signatureBase?: Uint8Array;
  }): Promise<Uint8Array>;
  /**
   * Coffer's core only: verifySignature that, for a valid signature, returns the point B a
   * holder keeps to make every later deriveProof cheaper; undefined for an invalid one.
   */
  verifySignatureKeepingBase?(args: {
    publicKey: Uint8Array;
    signature: Uint8Array;
    header: Uint8Array;
    messages: Uint8Array[];
  }): Promise<Uint8Array | undefined>;
  /**
   * Coffer's core only: verifySignatureKeepingBase of several signatures, answered per signature
   * as one call each would answer, with the pairing work shared (bbs/sign.ts, batchHolds).
   */
  verifySignaturesKeepingBase?(
    batch: Array<{
      publicKey: Uint8Array;
      signature: Uint8Array;
      header: Uint8Array;
      messages: Uint8Array[];
    }>,
  ): Promise<Array<Uint8Array | undefined>>;
  verifyProof(args: {
    publicKey: Uint8Array;
    proof: Uint8Array;
    header: Uint8Array;
    presentationHeader: Uint8Array;
    disclosedMessages: Uint8Array[];
    disclosedMessageIndexes: number[];
  }): Promise<boolean>;
}

export function assertBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`"${name}" must be a Uint8Array`);
}

export function assertBytesArray(value: unknown, name: string): asserts value is Uint8Array[] {
  if (!Array.isArray(value)) throw new TypeError(`"${name}" must be an array`);
  value.forEach((item, i) => {
    assertBytes(item, `${name}[${i}]`);
  });
}

export function assertNumberArray(value: unknown, name: string): asserts value is number[] {
  if (!Array.isArray(value)) throw new TypeError(`"${name}" must be an array`);
  value.forEach((item, i) => {
    if (typeof item !== 'number') throw new TypeError(`"${name}[${i}]" must be a number`);
  });
}

/** The argument types of verifySignature, checked alike by every suite behind the interface. */
export function assertVerifySignatureArgs(args: Parameters<BbsSuite['verifySignature']>[0]): void {
  assertBytes(args.publicKey, 'publicKey');
  assertBytes(args.signature, 'signature');
  assertBytes(args.header, 'header');
  assertBytesArray(args.messages, 'messages');
}

/** The argument types of verifyProof, checked alike by every suite behind the interface. */
export function assertVerifyProofArgs(args: Parameters<BbsSuite['verifyProof']>[0]): void {
  assertBytes(args.publicKey, 'publicKey');
  assertBytes(args.proof, 'proof');
  assertBytes(args.header, 'header');
  assertBytes(args.presentationHeader, 'presentationHeader');
  assertBytesArray(args.disclosedMessages, 'disclosedMessages');
  assertNumberArray(args.disclosedMessageIndexes, 'disclosedMessageIndexes');
}
