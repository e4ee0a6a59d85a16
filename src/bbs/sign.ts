/** CoreSign and CoreVerify, over message scalars. */
import { Fr, HASH_TO_SCALAR_DST, MAX_MESSAGES } from './ciphersuite.ts';
import { g1MultiScalarMul, g1ToBytes, isIdentityG1, P1, pairingProductIsIdentity } from './curve.ts';
import { calculateDomain } from './domain.ts';
import { messageGenerators } from './generators.ts';
import { hashToScalar } from './hash-to-scalar.ts';
import { concatOctets } from './octets.ts';
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
  return verifiedSignature(publicKey, signature, header, messageScalars) !== undefined;
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
  const verified = verifiedSignature(publicKey, signature, header, messageScalars);
  if (verified === undefined) return undefined;
  const { a, e, aTimesEMinusB } = verified;
  return g1ToBytes(g1MultiScalarMul([a, aTimesEMinusB], [e, Fr.neg(1n)]));
}

/** The decoded signature and A * e - B when the signature is valid, else undefined. */
function verifiedSignature(
  publicKey: Uint8Array,
  signature: Uint8Array,
  header: Uint8Array,
  messageScalars: readonly bigint[],
) {
  const decoded = octetsToSignature(signature);
  if (decoded === undefined) return undefined;
  const w = publicKeyFromOctets(publicKey);
  if (w === undefined) return undefined;
  if (messageScalars.length > MAX_MESSAGES) return undefined;
  const generators = messageGenerators(messageScalars.length);
  const domain = calculateDomain(publicKey, generators, header);
  // The draft checks e(A, W + BP2 * e) * e(B, -BP2) == 1. By bilinearity that is
  // e(A, W) * e(A * e - B, BP2) == 1, which needs no G2 multiplication and lets A * e - B be one
  // multi-scalar multiplication with B's terms negated.
  const aTimesEMinusB = g1MultiScalarMul(
    [decoded.a, P1, generators.q1, ...generators.h],
    [decoded.e, Fr.neg(1n), Fr.neg(domain), ...messageScalars.map((m) => Fr.neg(m))],
  );
  if (!pairingProductIsIdentity(decoded.a, w, aTimesEMinusB)) return undefined;
  return { ...decoded, aTimesEMinusB };
}
