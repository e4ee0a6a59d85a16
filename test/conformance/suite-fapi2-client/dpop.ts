import { b64json, randomString, type SuiteKey, seconds, sha256Base64url, signCompact } from './keys.ts';

/**
 * DPoP proofs as the suite's CreateDpopProofSteps builds them (RFC 9449 §4.2): CreateDpopHeader
 * (typ dpop+jwt, alg ES256, the public jwk), CreateDpopClaims (a random jti, iat now), the
 * endpoint's htm and htu, the server's nonce when one was given, ath at a resource, then
 * SignDpopProof. A variation changes one step the way the suite's negative modules do
 * (Fapi2DPoPNegativeConditions).
 */
export interface DpopTarget {
  htm: string;
  htu: string;
  nonce?: string | undefined;
  /** At a resource: the access token the proof names (SetDpopAccessTokenHash). */
  accessToken?: string | undefined;
}

export interface DpopVariation {
  /** Changes the header before signing (RemoveTypFromDpopProof, SetDpopHeaderJwkToPrivateKey…). */
  header?: (header: Record<string, unknown>) => void;
  /** Changes the claims before signing (SetDpopIatTo10SecondsInPast, FixedJtiClaim…). */
  claims?: (claims: Record<string, unknown>) => void;
  /** Signs with another key than the one in the header (GenerateNewSignKey … RecoverSignKey). */
  signWith?: SuiteKey;
  /** alg none, no signature (SignDpopProofWithNone). */
  unsigned?: boolean;
  /** Skips SetDpopAccessTokenHash. */
  withoutAth?: boolean;
  /** Changes the signed compact JWS (NotWellformedDPoP, InvalidateDpopProofSignature, SignDpopAndRemoveAlg). */
  after?: (proof: string) => string;
}

export async function createDpopProof(
  key: SuiteKey,
  target: DpopTarget,
  variation: DpopVariation = {},
): Promise<string> {
  const { kty, crv, x, y } = key.publicJwk;
  const header: Record<string, unknown> = { typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } };
  const claims: Record<string, unknown> = { jti: randomString(), iat: seconds() };
  claims['htm'] = target.htm;
  claims['htu'] = target.htu;
  if (target.nonce !== undefined) claims['nonce'] = target.nonce;
  if (target.accessToken !== undefined && !variation.withoutAth)
    claims['ath'] = sha256Base64url(target.accessToken);
  variation.header?.(header);
  variation.claims?.(claims);
  const proof = variation.unsigned
    ? `${b64json({ alg: 'none', typ: 'dpop+jwt' })}.${b64json(claims)}.`
    : await signCompact(header, claims, (variation.signWith ?? key).privateKey);
  return variation.after ? variation.after(proof) : proof;
}

/** EnsureDpopNonceContainsAllowedCharactersOnly (RFC 9449 §8.1): NQCHAR only. */
export const isNqchar = (nonce: string) => /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(nonce);

/** A variation's step that sets one claim or header parameter, from the members so far. */
export const setMember =
  (name: string, value: (members: Record<string, unknown>) => unknown) =>
  (members: Record<string, unknown>) => {
    members[name] = value(members);
  };
