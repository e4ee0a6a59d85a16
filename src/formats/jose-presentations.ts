import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { compactVerify, type JWTPayload } from 'jose';
import { isJwsAlgorithm, verifyCompactJws } from '../keys/compact-jws.ts';
import type { IssuerCertificate, ParseContext } from './credential-format.ts';
import type { IssuerKey } from './jose-credentials.ts';
import { fail } from './presentation-checks.ts';
import { type NamedCheck, type PresentationExpectation, trustedDid } from './presentation-verification.ts';

/**
 * What the verifier side of the JWT-secured formats (dc+sd-jwt, jwt_vc_json) shares: the store's
 * context for an expectation, who the issuer is and whether it is trusted, a holder's signature,
 * and how fresh a key binding JWT or VP JWT must be.
 */

/** A wallet's clock may run ahead of ours by this much. */
const FUTURE_SKEW_SECONDS = 60;

/** The store's parse context for these expectations: the same clock and issuer trust anchors. */
export const contextOf = (expected: PresentationExpectation): ParseContext => ({
  now: expected.now,
  issuerTrustAnchors: expected.issuerTrustAnchors,
});

export interface PresentedIssuer {
  id: string;
  trusted: boolean;
  certificate: IssuerCertificate | null;
  trustedBy?: 'certificate' | 'did' | 'openid_federation' | 'etsi_tl';
  trustAnchor?: string;
}

/**
 * The issuer as its key names it: a certificate (trusted as the store marks it, by its chain to an
 * anchor; named by `iss`, else its subject) or a DID (trusted when the request lists it; named by
 * that DID, the name its key proves, even where `iss` says something else).
 */
export function issuerOf(
  payload: JWTPayload,
  issuerKey: IssuerKey,
  expected: PresentationExpectation,
): PresentedIssuer {
  const { certificate, did } = issuerKey;
  if (certificate) {
    const id = payload.iss ?? certificate.subject;
    return certificate.trusted
      ? { id, trusted: true, certificate, trustedBy: 'certificate' }
      : { id, trusted: false, certificate };
  }
  return trustedDid(did!, expected)
    ? { id: did!, trusted: true, certificate: null, trustedBy: 'did' }
    : { id: did!, trusted: false, certificate: null };
}

/**
 * The `issuer_trusted` check: trusted by its certificate or DID, else through a granted issuer
 * service of a TRUSTED_LISTS list its x5c chain reaches, else — for an https issuer signing with
 * an x5c key — through a federation of FEDERATION_TRUST_ANCHORS that lists that key.
 */
export async function issuerTrusted(
  issuer: PresentedIssuer,
  issuerKey: IssuerKey,
  expected: PresentationExpectation,
): Promise<boolean> {
  if (issuer.trusted) return true;
  if (expected.trustedListTrust && issuerKey.leaf) {
    const list = await expected.trustedListTrust(issuerKey.leaf, issuerKey.intermediates ?? [], expected.now);
    if (list) {
      Object.assign(issuer, { trusted: true, trustedBy: 'etsi_tl', trustAnchor: list });
      return true;
    }
  }
  if (!expected.federationTrust || !issuerKey.leaf || !issuer.id.startsWith('https://')) return false;
  const jwk = issuerKey.leaf.publicKey.export({ format: 'jwk' });
  const anchor = await expected.federationTrust(issuer.id, jwk);
  if (!anchor) return false;
  Object.assign(issuer, { trusted: true, trustedBy: 'openid_federation', trustAnchor: anchor });
  return true;
}

/** The issuer as far as it was read; `trusted` only when its signature verified too. */
export const reportedIssuer = (issuer: PresentedIssuer | undefined, checks: NamedCheck[]) =>
  issuer
    ? {
        ...issuer,
        trusted: issuer.trusted && checks.some((check) => check.name === 'issuer_signature' && check.ok),
      }
    : null;

/** The sentence for an issuer that is not trusted. */
export const untrusted = (issuer: PresentedIssuer) =>
  issuer.certificate
    ? `The issuer's certificate (${issuer.certificate.subject}) chains to none of the trusted issuer anchors.`
    : `The issuer ${issuer.id} is not one of the trusted issuers.`;

/** The sentence for an issuer trusted neither by certificate nor by a trusted list or federation that was asked. */
export const untrustedAnywhere = (issuer: PresentedIssuer, expected: PresentationExpectation) => {
  const lists =
    expected.trustedListTrust && issuer.certificate
      ? ' Nor does its chain reach a granted issuer service of a trusted list (or no list could be used now).'
      : '';
  return expected.federationTrust && issuer.id.startsWith('https://')
    ? `${untrusted(issuer)}${lists} Nor is it trusted through a federation: no trust chain to a federation anchor lists its signing key (or the federation could not be reached).`
    : `${untrusted(issuer)}${lists}`;
};

/** Whether `jws` verifies with the holder's public key; jose refuses an `alg` the key cannot make. */
export async function signedBy(jws: string, jwk: JsonWebKey, alg: string): Promise<boolean> {
  try {
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    // Coffer's own JWS check (node:crypto in one call) for the algorithms it knows; jose for others.
    if (isJwsAlgorithm(alg)) verifyCompactJws(jws, alg, key);
    else await compactVerify(jws, key, { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const isSeconds = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * `iat` no older than maxAgeSeconds and not ahead of our clock by more than a minute; `exp` and
 * `nbf`, where given, honoured with the same minute. `what` names the JWT in the sentence.
 */
export function checkFreshness(payload: JWTPayload, expected: PresentationExpectation, what: string): void {
  const now = expected.now.getTime() / 1000;
  const { iat, exp, nbf } = payload;
  if (!isSeconds(iat)) fail(`${what} has no iat (seconds since the epoch).`);
  if (iat > now + FUTURE_SKEW_SECONDS) fail(`${what} was issued in the future (iat ${iso(iat)}).`);
  if (now - iat > expected.maxAgeSeconds) {
    fail(`${what} was issued at ${iso(iat)}, more than ${expected.maxAgeSeconds} s ago.`);
  }
  if (exp !== undefined && (!isSeconds(exp) || exp <= now - FUTURE_SKEW_SECONDS))
    fail(`${what} has expired (exp ${String(exp)}).`);
  if (nbf !== undefined && (!isSeconds(nbf) || nbf > now + FUTURE_SKEW_SECONDS))
    fail(`${what} is not valid yet (nbf ${String(nbf)}).`);
}
