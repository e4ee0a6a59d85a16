/** The part of @digitalbazaar/bbs-signatures (v3, plain JavaScript, no types) that Coffer uses. */
declare module '@digitalbazaar/bbs-signatures' {
  export const CIPHERSUITES: {
    readonly BLS12381_SHAKE256: 'BLS12-381-SHAKE-256';
    readonly BLS12381_SHA256: 'BLS12-381-SHA-256';
  };
  type Ciphersuite = (typeof CIPHERSUITES)[keyof typeof CIPHERSUITES];

  export function generateKeyPair(args?: {
    seed?: Uint8Array;
    ciphersuite: Ciphersuite;
  }): Promise<{ secretKey: Uint8Array; publicKey: Uint8Array }>;
  export function secretKeyToPublicKey(args: {
    secretKey: Uint8Array;
    ciphersuite: Ciphersuite;
  }): Promise<Uint8Array>;
  export function sign(args: {
    secretKey: Uint8Array;
    publicKey?: Uint8Array;
    header: Uint8Array;
    messages: Uint8Array[];
    ciphersuite: Ciphersuite;
  }): Promise<Uint8Array>;
  export function verifySignature(args: {
    publicKey: Uint8Array;
    signature: Uint8Array;
    header: Uint8Array;
    messages: Uint8Array[];
    ciphersuite: Ciphersuite;
  }): Promise<boolean>;
  export function deriveProof(args: {
    publicKey: Uint8Array;
    signature: Uint8Array;
    header: Uint8Array;
    messages: Uint8Array[];
    presentationHeader: Uint8Array;
    disclosedMessageIndexes: number[];
    ciphersuite: Ciphersuite;
  }): Promise<Uint8Array>;
  export function verifyProof(args: {
    publicKey: Uint8Array;
    proof: Uint8Array;
    header: Uint8Array;
    presentationHeader: Uint8Array;
    disclosedMessages: Uint8Array[];
    disclosedMessageIndexes: number[];
    ciphersuite: Ciphersuite;
  }): Promise<boolean>;
}
