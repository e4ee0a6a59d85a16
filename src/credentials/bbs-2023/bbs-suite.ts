import * as stock from '@digitalbazaar/bbs-signatures';

/**
 * The BBS operations bbs-2023 needs (ciphersuite BLS12-381-SHA-256), with the argument shapes
 * of @digitalbazaar/bbs-signatures, so that implementations can be swapped behind it.
 */
export interface BbsSuite {
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
  }): Promise<Uint8Array>;
  verifyProof(args: {
    publicKey: Uint8Array;
    proof: Uint8Array;
    header: Uint8Array;
    presentationHeader: Uint8Array;
    disclosedMessages: Uint8Array[];
    disclosedMessageIndexes: number[];
  }): Promise<boolean>;
}

const ciphersuite = 'BLS12-381-SHA-256';

/** The reference implementation; invalid input makes it throw, which counts as "does not verify". */
export const stockBbs: BbsSuite = {
  sign: (args) => stock.sign({ ...args, ciphersuite }),
  verifySignature: (args) => stock.verifySignature({ ...args, ciphersuite }).catch(() => false),
  deriveProof: (args) => stock.deriveProof({ ...args, ciphersuite }),
  verifyProof: (args) => stock.verifyProof({ ...args, ciphersuite }).catch(() => false),
};
