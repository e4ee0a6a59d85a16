/**
 * fastBbs: BBS signatures (IETF draft, ciphersuite BLS12-381-SHA-256) on the curve backend of
 * curve.ts (native blst when built, else mcl-wasm), with cached generators, multi-scalar
 * multiplications and single-final-exponentiation pairing checks.
 */
import { randomBytes } from 'node:crypto';
import { SCALAR_LENGTH } from './ciphersuite.ts';
import { messagesToScalars } from './hash-to-scalar.ts';
import { keyGen, secretKeyToScalar, skToPk } from './keys.ts';
import { i2osp } from './octets.ts';
import { coreProofGen, coreProofVerify } from './proof.ts';
import { secureRandomScalars } from './random-scalars.ts';
import { coreSign, coreVerify, coreVerifyBatchWithBase, coreVerifyWithBase } from './sign.ts';
import {
  assertBytes,
  assertBytesArray,
  assertNumberArray,
  assertVerifyProofArgs,
  assertVerifySignatureArgs,
  type BbsSuite,
} from './suite.ts';

export type { BbsSuite } from './suite.ts';

export const fastBbs: BbsSuite = {
  async generateKeyPair({ seed } = {}) {
    if (seed !== undefined) assertBytes(seed, 'seed');
    const secretKey = keyGen(seed ?? randomBytes(SCALAR_LENGTH));
    return { secretKey: i2osp(secretKey, SCALAR_LENGTH), publicKey: skToPk(secretKey) };
  },

  async secretKeyToPublicKey({ secretKey }) {
    assertBytes(secretKey, 'secretKey');
    return skToPk(secretKeyToScalar(secretKey));
  },

  async sign({ secretKey, publicKey, header, messages }) {
    assertBytes(secretKey, 'secretKey');
    if (publicKey !== undefined) assertBytes(publicKey, 'publicKey');
    assertBytes(header, 'header');
    assertBytesArray(messages, 'messages');
    const secretScalar = secretKeyToScalar(secretKey);
    // The stock library signs with whatever public key it is given; a key that does not belong
    // to the secret key yields a signature that verifies under no key, so it is refused here
    // (at the price of one G2 multiplication, ~0.6 ms).
    const derivedPublicKey = skToPk(secretScalar);
    if (publicKey !== undefined && Buffer.compare(publicKey, derivedPublicKey) !== 0) {
      throw new Error('sign: publicKey is not the public key of secretKey');
    }
    return coreSign(secretScalar, derivedPublicKey, header, messagesToScalars(messages));
  },

  async verifySignature(args) {
    assertVerifySignatureArgs(args);
    const { publicKey, signature, header, messages } = args;
    return coreVerify(publicKey, signature, header, messagesToScalars(messages));
  },

  async verifySignatureKeepingBase(args) {
    assertVerifySignatureArgs(args);
    const { publicKey, signature, header, messages } = args;
    return coreVerifyWithBase(publicKey, signature, header, messagesToScalars(messages));
  },

  async verifySignaturesKeepingBase(batch) {
    if (!Array.isArray(batch)) throw new TypeError('"batch" must be an array');
    batch.forEach(assertVerifySignatureArgs);
    return coreVerifyBatchWithBase(
      batch.map(({ publicKey, signature, header, messages }) => ({
        publicKey,
        signature,
        header,
        messageScalars: messagesToScalars(messages),
      })),
    );
  },

  async deriveProof({
    publicKey,
    signature,
    header,
    messages,
    presentationHeader,
    disclosedMessageIndexes,
    signatureBase,
  }) {
    assertBytes(publicKey, 'publicKey');
    assertBytes(signature, 'signature');
    assertBytes(header, 'header');
    assertBytesArray(messages, 'messages');
    assertBytes(presentationHeader, 'presentationHeader');
    assertNumberArray(disclosedMessageIndexes, 'disclosedMessageIndexes');
    if (signatureBase !== undefined) assertBytes(signatureBase, 'signatureBase');
    return coreProofGen({
      publicKey,
      signature,
      header,
      presentationHeader,
      messageScalars: messagesToScalars(messages),
      disclosedIndexes: disclosedMessageIndexes,
      randomScalars: secureRandomScalars,
      ...(signatureBase === undefined ? {} : { signatureBase }),
    });
  },

  async verifyProof(args) {
    assertVerifyProofArgs(args);
    const { publicKey, proof, header, presentationHeader, disclosedMessages, disclosedMessageIndexes } = args;
    if (disclosedMessages.length !== disclosedMessageIndexes.length) return false;
    return coreProofVerify({
      publicKey,
      proof,
      header,
      presentationHeader,
      disclosedScalars: messagesToScalars(disclosedMessages),
      disclosedIndexes: disclosedMessageIndexes,
    });
  },
};
