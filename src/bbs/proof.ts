/** CoreProofGen and CoreProofVerify, over message scalars. */
import { Fr, HASH_TO_SCALAR_DST, MAX_MESSAGES } from './ciphersuite.ts';
import {
  type G1,
  g1FromCheckedBytes,
  g1Mul,
  g1MultiScalarMul,
  g1Negate,
  g1ToBytes,
  normalizeG1,
  P1,
  pairingProductIsIdentity,
} from './curve.ts';
import { calculateDomain } from './domain.ts';
import { type Generators, messageGenerators } from './generators.ts';
import { hashToScalar } from './hash-to-scalar.ts';
import { concatOctets, i2osp8 } from './octets.ts';
import { publicKeyFromOctets } from './public-keys.ts';
import type { RandomScalars } from './random-scalars.ts';
import { octetsToProof, octetsToSignature, proofToOctets, scalarToOctets } from './serialize.ts';

/** Disclosed indexes must be integers in [0, messageCount), strictly ascending (so unique). */
export function isValidIndexSet(indexes: readonly number[], messageCount: number): boolean {
  let previous = -1;
  for (const index of indexes) {
    if (!Number.isInteger(index) || index <= previous || index >= messageCount) return false;
    previous = index;
  }
  return true;
}

/** The complement of the disclosed indexes, ascending. */
function undisclosedIndexes(disclosedIndexes: readonly number[], messageCount: number): number[] {
  const disclosed = new Set(disclosedIndexes);
  const undisclosed: number[] = [];
  for (let i = 0; i < messageCount; i++) if (!disclosed.has(i)) undisclosed.push(i);
  return undisclosed;
}

/**
 * ProofChallengeCalculate: hash_to_scalar of serialize((R, i1, msg_i1, ..., iR, msg_iR, Abar,
 * Bbar, D, T1, T2, domain)) || I2OSP(length(ph), 8) || ph.
 */
function calculateChallenge(
  encodedPoints: readonly Uint8Array[],
  disclosedIndexes: readonly number[],
  disclosedScalars: readonly bigint[],
  domain: bigint,
  presentationHeader: Uint8Array,
): bigint {
  const parts: Uint8Array[] = [i2osp8(disclosedIndexes.length)];
  disclosedIndexes.forEach((index, i) => {
    parts.push(i2osp8(index), scalarToOctets(disclosedScalars[i]!));
  });
  parts.push(...encodedPoints, scalarToOctets(domain), i2osp8(presentationHeader.length), presentationHeader);
  return hashToScalar(concatOctets(parts), HASH_TO_SCALAR_DST);
}

function encodeAll(points: G1[]): Uint8Array[] {
  normalizeG1(points);
  return points.map(g1ToBytes);
}

/** D = B * r2 with B = P1 + Q_1 * domain + sum(H_i * msg_i): B given, or one MSM with r2 folded in. */
function dPoint(
  signatureBase: Uint8Array | undefined,
  generators: Generators,
  domain: bigint,
  messageScalars: readonly bigint[],
  r2: bigint,
): G1 {
  const b = signatureBase === undefined ? undefined : g1FromCheckedBytes(signatureBase);
  if (signatureBase !== undefined && b === undefined) throw new Error('deriveProof: B does not decode');
  if (b !== undefined) return g1Mul(b, r2);
  return g1MultiScalarMul(
    [P1, generators.q1, ...generators.h],
    [r2, Fr.mul(domain, r2), ...messageScalars.map((m) => Fr.mul(m, r2))],
  );
}

export interface ProofGenInput {
  publicKey: Uint8Array;
  signature: Uint8Array;
  header: Uint8Array;
  presentationHeader: Uint8Array;
  messageScalars: readonly bigint[];
  disclosedIndexes: readonly number[];
  /** A CSPRNG in use; the draft's mocked scalars to reproduce its fixtures. */
  randomScalars: RandomScalars;
  /**
   * B of this signature, as coreVerifyWithBase returned it when the signature was verified: the
   * proof is then the same, but D = B * r2 is one multiplication instead of an MSM over every
   * generator, and the signature's point is decoded without its subgroup check (it was checked).
   */
  signatureBase?: Uint8Array;
}

/** Throws for an invalid signature or index set: the prover's own inputs are wrong. */
export function coreProofGen(input: ProofGenInput): Uint8Array {
  const { messageScalars, disclosedIndexes } = input;
  const signature = octetsToSignature(input.signature, input.signatureBase !== undefined);
  if (signature === undefined) throw new Error('deriveProof: the signature does not decode');
  // Only hashed into the domain here, but a key that is not a valid G2 point can only make a proof
  // that never verifies (and the check is cached for the verifications that follow).
  if (publicKeyFromOctets(input.publicKey) === undefined) {
    throw new Error('deriveProof: the public key is not a valid G2 point');
  }
  const messageCount = messageScalars.length;
  if (messageCount > MAX_MESSAGES) throw new RangeError(`more than ${MAX_MESSAGES} messages`);
  if (!isValidIndexSet(disclosedIndexes, messageCount)) {
    throw new RangeError('disclosedMessageIndexes must be ascending, unique and within the messages');
  }
  const undisclosed = undisclosedIndexes(disclosedIndexes, messageCount);
  const [r1, r2, eTilde, r1Tilde, r3Tilde, ...mTilde] = input.randomScalars(5 + undisclosed.length) as [
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    ...bigint[],
  ];

  const generators = messageGenerators(messageCount);
  const domain = calculateDomain(input.publicKey, generators, input.header);
  const d = dPoint(input.signatureBase, generators, domain, messageScalars, r2);
  const abar = g1Mul(signature.a, Fr.mul(r1, r2));
  const bbar = g1MultiScalarMul([d, abar], [r1, Fr.neg(signature.e)]);
  const t1 = g1MultiScalarMul([abar, d], [eTilde, r1Tilde]);
  const t2 = g1MultiScalarMul([d, ...undisclosed.map((j) => generators.h[j]!)], [r3Tilde, ...mTilde]);
  const [abarOctets, bbarOctets, dOctets, t1Octets, t2Octets] = encodeAll([abar, bbar, d, t1, t2]) as [
    Uint8Array,
    Uint8Array,
    Uint8Array,
    Uint8Array,
    Uint8Array,
  ];

  const challenge = calculateChallenge(
    [abarOctets, bbarOctets, dOctets, t1Octets, t2Octets],
    disclosedIndexes,
    disclosedIndexes.map((i) => messageScalars[i]!),
    domain,
    input.presentationHeader,
  );

  // ProofFinalize.
  const r3 = Fr.inv(r2);
  return proofToOctets(
    { abar: abarOctets, bbar: bbarOctets, d: dOctets },
    {
      eHat: Fr.add(eTilde, Fr.mul(signature.e, challenge)),
      r1Hat: Fr.sub(r1Tilde, Fr.mul(r1, challenge)),
      r3Hat: Fr.sub(r3Tilde, Fr.mul(r3, challenge)),
      commitments: undisclosed.map((j, k) => Fr.add(mTilde[k]!, Fr.mul(messageScalars[j]!, challenge))),
      challenge,
    },
  );
}

export interface ProofVerifyInput {
  publicKey: Uint8Array;
  proof: Uint8Array;
  header: Uint8Array;
  presentationHeader: Uint8Array;
  disclosedScalars: readonly bigint[];
  disclosedIndexes: readonly number[];
}

export function coreProofVerify(input: ProofVerifyInput): boolean {
  const { disclosedScalars, disclosedIndexes } = input;
  const proof = octetsToProof(input.proof);
  if (proof === undefined) return false;
  const w = publicKeyFromOctets(input.publicKey);
  if (w === undefined) return false;
  if (disclosedScalars.length !== disclosedIndexes.length) return false;
  const messageCount = disclosedIndexes.length + proof.commitments.length;
  if (messageCount > MAX_MESSAGES) return false;
  if (!isValidIndexSet(disclosedIndexes, messageCount)) return false;
  const undisclosed = undisclosedIndexes(disclosedIndexes, messageCount);

  const generators = messageGenerators(messageCount);
  const domain = calculateDomain(input.publicKey, generators, input.header);
  const c = proof.challenge;
  const t1 = g1MultiScalarMul([proof.bbar, proof.abar, proof.d], [c, proof.eHat, proof.r1Hat]);
  // T2 = Bv * c + D * r3^ + sum(H_j * m^_j) with Bv = P1 + Q_1 * domain + sum(H_i * msg_i):
  // every generator appears once, so it is one MSM with c folded into Bv's coefficients.
  const t2 = g1MultiScalarMul(
    [
      P1,
      generators.q1,
      ...disclosedIndexes.map((i) => generators.h[i]!),
      proof.d,
      ...undisclosed.map((j) => generators.h[j]!),
    ],
    [c, Fr.mul(c, domain), ...disclosedScalars.map((m) => Fr.mul(c, m)), proof.r3Hat, ...proof.commitments],
  );
  const challenge = calculateChallenge(
    encodeAll([proof.abar, proof.bbar, proof.d, t1, t2]),
    disclosedIndexes,
    disclosedScalars,
    domain,
    input.presentationHeader,
  );
  if (challenge !== c) return false;
  // e(Abar, W) * e(Bbar, -BP2) == 1, with the negation moved to the G1 side.
  return pairingProductIsIdentity(proof.abar, w, g1Negate(proof.bbar));
}
