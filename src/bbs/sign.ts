/** CoreSign and CoreVerify, over message scalars. */
import { randomBytes } from 'node:crypto';
import { Fr, HASH_TO_SCALAR_DST, MAX_MESSAGES } from './ciphersuite.ts';
import {
  type G1,
  g1MultiScalarMul,
  g1ToBytes,
  isIdentityG1,
  P1,
  type PreparedG2,
  pairingProductIsIdentity,
} from './curve.ts';
import { calculateDomain } from './domain.ts';
import { messageGenerators } from './generators.ts';
import { hashToScalar } from './hash-to-scalar.ts';
import { concatOctets, os2ip } from './octets.ts';
import { publicKeyFromOctets } from './public-keys.ts';
import { octetsToSignature, scalarToOctets, signatureToOctets } from './serialize.ts';

export function coreSign(
  secretKey: bigint,
  publicKey: Uint8Array,
  header: Uint8Array,
  messageScalars: readonly bigint[],
): Uint8Array {
  const generators = messageGenerators(messageScalars.length);
  const domain = calculateDomain(publicKey, generators, header);
  const e = hashToScalar(
    concatOctets([secretKey, ...messageScalars, domain].map(scalarToOctets)),
    HASH_TO_SCALAR_DST,
  );
  const skPlusE = Fr.add(secretKey, e);
  if (skPlusE === 0n) throw new Error('Sign: SK + e is zero');
  // A = B * 1/(SK + e) with B = P1 + Q_1 * domain + sum(H_i * msg_i): the inverse is folded into
  // the coefficients so A is one multi-scalar multiplication.
  const inverse = Fr.inv(skPlusE);
  const a = g1MultiScalarMul(
    [P1, generators.q1, ...generators.h],
    [inverse, Fr.mul(domain, inverse), ...messageScalars.map((m) => Fr.mul(m, inverse))],
  );
  if (isIdentityG1(a)) throw new Error('Sign: A is the identity');
  return signatureToOctets({ a, e });
}

export function coreVerify(
  publicKey: Uint8Array,
  signature: Uint8Array,
  header: Uint8Array,
  messageScalars: readonly bigint[],
): boolean {
  return coreVerifyWithBase(publicKey, signature, header, messageScalars) !== undefined;
}

export interface SignedMessages {
  publicKey: Uint8Array;
  signature: Uint8Array;
  header: Uint8Array;
  messageScalars: readonly bigint[];
}

/**
 * CoreVerify that, for a valid signature, returns B = P1 + Q_1 * domain + sum(H_i * msg_i)
 * (compressed). B depends only on the key, header and messages, so a holder that keeps it saves
 * the largest multi-scalar multiplication of every later proof (proof.ts, `signatureBase`).
 */
export function coreVerifyWithBase(
  publicKey: Uint8Array,
  signature: Uint8Array,
  header: Uint8Array,
  messageScalars: readonly bigint[],
): Uint8Array | undefined {
  return coreVerifyBatchWithBase([{ publicKey, signature, header, messageScalars }])[0];
}

/**
 * At most this many signatures share a pairing product: beyond it the saving is marginal, and the
 * prepared keys a batch holds stay far fewer than the key cache keeps (public-keys.ts), so none
 * is released while the batch uses it.
 */
const MAX_BATCH = 32;

/** A signature decoded, with its B computed: everything but the pairing check. */
interface Candidate {
  index: number;
  key: PreparedG2;
  a: G1;
  e: bigint;
  b: G1;
}

function candidateOf(signed: SignedMessages, index: number): Candidate | undefined {
  const decoded = octetsToSignature(signed.signature);
  if (decoded === undefined) return undefined;
  const key = publicKeyFromOctets(signed.publicKey);
  if (key === undefined) return undefined;
  if (signed.messageScalars.length > MAX_MESSAGES) return undefined;
  const generators = messageGenerators(signed.messageScalars.length);
  const domain = calculateDomain(signed.publicKey, generators, signed.header);
  const b = g1MultiScalarMul([P1, generators.q1, ...generators.h], [1n, domain, ...signed.messageScalars]);
  return { index, key, a: decoded.a, e: decoded.e, b };
}

/**
 * Whether every candidate's signature holds, with one pairing product for all. The draft checks
 * e(A, W + BP2 * e) * e(B, -BP2) == 1, which by bilinearity is e(A, W) * e(A * e - B, BP2) == 1.
 * Raising each candidate's check to a fresh random 128-bit weight r_i and multiplying gives
 * e(sum r_i A_i, W) * e(sum r_i (A_i e_i - B_i), BP2) == 1 (the small-exponents batch test of
 * Bellare, Garay and Rabin): it holds for all when each holds, and holds with probability at most
 * 2^-128 when one does not. Candidates share the key W.
 */
function batchHolds(candidates: readonly Candidate[]): boolean {
  const weights = candidates.length === 1 ? [1n] : candidates.map(() => 1n + os2ip(randomBytes(16)));
  const left =
    candidates.length === 1
      ? candidates[0]!.a
      : g1MultiScalarMul(
          candidates.map((c) => c.a),
          weights,
        );
  const right = g1MultiScalarMul(
    [...candidates.map((c) => c.a), ...candidates.map((c) => c.b)],
    [...candidates.map((c, i) => Fr.mul(weights[i]!, c.e)), ...weights.map((r) => Fr.neg(r))],
  );
  return pairingProductIsIdentity(left, candidates[0]!.key, right);
}

/**
 * CoreVerify of several signatures at once, as a server checks the credentials that arrived
 * together: for each, B when it is valid and undefined when not, exactly as one coreVerifyWithBase
 * per signature would answer. Signatures under one key share a single pairing product
 * (batchHolds); when a batch fails, each of its signatures is checked alone, so an invalid one
 * costs the others nothing but time.
 */
export function coreVerifyBatchWithBase(batch: readonly SignedMessages[]): Array<Uint8Array | undefined> {
  if (batch.length > MAX_BATCH) {
    const results: Array<Uint8Array | undefined> = [];
    for (let i = 0; i < batch.length; i += MAX_BATCH)
      results.push(...coreVerifyBatchWithBase(batch.slice(i, i + MAX_BATCH)));
    return results;
  }
  const results: Array<Uint8Array | undefined> = batch.map(() => undefined);
  const byKey = new Map<PreparedG2, Candidate[]>();
  batch.forEach((signed, index) => {
    const candidate = candidateOf(signed, index);
    if (candidate === undefined) return;
    const group = byKey.get(candidate.key);
    if (group === undefined) byKey.set(candidate.key, [candidate]);
    else group.push(candidate);
  });
  const accept = (c: Candidate) => {
    results[c.index] = g1ToBytes(c.b);
  };
  for (const group of byKey.values()) {
    if (batchHolds(group)) group.forEach(accept);
    else if (group.length > 1) for (const c of group) if (batchHolds([c])) accept(c);
  }
  return results;
}
