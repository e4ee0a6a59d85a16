declare module '@digitalbazaar/bbs-signatures' {
  interface Suite {
    ciphersuite: string;
  }
  export function sign(
    args: Suite & {
      secretKey: Uint8Array;
      publicKey?: Uint8Array;
      header: Uint8Array;
      messages: Uint8Array[];
    },
  ): Promise<Uint8Array>;
  export function verifySignature(
    args: Suite & {
      publicKey: Uint8Array;
      signature: Uint8Array;
      header: Uint8Array;
      messages: Uint8Array[];
    },
  ): Promise<boolean>;
  export function deriveProof(
    args: Suite & {
      publicKey: Uint8Array;
      signature: Uint8Array;
      header: Uint8Array;
      messages: Uint8Array[];
      presentationHeader: Uint8Array;
      disclosedMessageIndexes: number[];
    },
  ): Promise<Uint8Array>;
  export function verifyProof(
    args: Suite & {
      publicKey: Uint8Array;
      proof: Uint8Array;
      header: Uint8Array;
      presentationHeader: Uint8Array;
      disclosedMessages: Uint8Array[];
      disclosedMessageIndexes: number[];
    },
  ): Promise<boolean>;
  export function generateKeyPair(
    args?: Partial<Suite> & { seed?: Uint8Array },
  ): Promise<{ secretKey: Uint8Array; publicKey: Uint8Array }>;
}
