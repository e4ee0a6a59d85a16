/**
 * stockBbs: @digitalbazaar/bbs-signatures behind the BbsSuite interface, ciphersuite fixed, for
 * benchmarks and cross-checks against the fast core (a dev dependency: the service never loads it).
 *
 * The stock library throws for some malformed inputs (a proof of the wrong length, a point that
 * does not decode); the adapter checks argument types as fastBbs does and turns any other
 * verification failure into false, so the two behave alike behind the interface.
 */
import * as stock from '@digitalbazaar/bbs-signatures';
import { assertVerifyProofArgs, assertVerifySignatureArgs, type BbsSuite } from './suite.ts';

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
    assertVerifySignatureArgs(args);
    return falseOnError(() => stock.verifySignature({ ...args, ciphersuite }));
  },
  deriveProof: (args) => stock.deriveProof({ ...args, ciphersuite }),
  async verifyProof(args) {
    assertVerifyProofArgs(args);
    return falseOnError(() => stock.verifyProof({ ...args, ciphersuite }));
  },
};
