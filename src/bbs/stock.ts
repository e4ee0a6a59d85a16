/**
 * stockBbs: @digitalbazaar/bbs-signatures behind the BbsSuite interface, ciphersuite fixed, for
 * benchmarks and cross-checks against the fast core.
 *
 * The stock library throws for some malformed inputs (a proof of the wrong length, a point that
 * does not decode); the adapter checks argument types as fastBbs does and turns any other
 * verification failure into false, so the two behave alike behind the interface.
 */
import * as stock from '@digitalbazaar/bbs-signatures';
import { assertBytes, assertBytesArray, assertNumberArray, type BbsSuite } from './suite.ts';

const ciphersuite = stock.CIPHERSUITES.BLS12381_SHA256;

async function falseOnError(verification: () => Promise<boolean>): Promise<boolean> {
  try {
    return await verification();
  } catch {
    return false;
  }
}

export const stockBbs: BbsSuite = {
  generateKeyPair: (args = {}) => stock.generateKeyPair({ ...args, ciphersuite }),
  secretKeyToPublicKey: (args) => stock.secretKeyToPublicKey({ ...args, ciphersuite }),
  sign: (args) => stock.sign({ ...args, ciphersuite }),
  async verifySignature(args) {
    assertBytes(args.publicKey, 'publicKey');
    assertBytes(args.signature, 'signature');
    assertBytes(args.header, 'header');
    assertBytesArray(args.messages, 'messages');
    return falseOnError(() => stock.verifySignature({ ...args, ciphersuite }));
  },
  deriveProof: (args) => stock.deriveProof({ ...args, ciphersuite }),
  async verifyProof(args) {
    assertBytes(args.publicKey, 'publicKey');
    assertBytes(args.proof, 'proof');
    assertBytes(args.header, 'header');
    assertBytes(args.presentationHeader, 'presentationHeader');
    assertBytesArray(args.disclosedMessages, 'disclosedMessages');
    assertNumberArray(args.disclosedMessageIndexes, 'disclosedMessageIndexes');
    return falseOnError(() => stock.verifyProof({ ...args, ciphersuite }));
  },
};
