import { createHash } from 'node:crypto';
import { decodeSdJwtSync, getClaimsSync } from '@sd-jwt/decode';
import type { Disclosure } from '@sd-jwt/utils';
import type { CredentialSummary, ParseContext, StatusReference } from '../credential-format.ts';
import { rejected } from '../credential-format.ts';
import { type DecodedJws, decodeJws, isoOrNull, issuerKeyOf } from '../jose-credentials.ts';
import { tokenStatusReference } from '../status-entries.ts';

/**
 * Reading the parts of a compact SD-JWT VC, shared by the store (index.ts) and the verifier
 * (verify-presentation.ts): the issuer-signed JWT's header and claims, the disclosures and the
 * claims they reveal, and the holder key in `cnf`.
 */

/**
 * `dc+sd-jwt` is the type since SD-JWT VC draft 06; `vc+sd-jwt` is its earlier name, which
 * issuers still use and the draft asks verifiers to accept for a transition period.
 */
export const SD_JWT_TYPES = ['dc+sd-jwt', 'vc+sd-jwt'];

export const sha256 = (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash('sha256')
      .update(typeof data === 'string' ? data : Buffer.from(data))
      .digest(),
  );

export const hasher = (data: string | ArrayBuffer, alg: string) => {
  if (alg.toLowerCase() !== 'sha-256') throw rejected(`its _sd_alg ${alg} is not sha-256`);
  return sha256(data);
};

/** The issuer-signed JWT, with its `typ`, `_sd_alg` and `vct` (and `iss`, where required) checked. */
export function readIssuerJwt(issuerJwt: string, requireIss: boolean): DecodedJws {
  const decodedJws = decodeJws(issuerJwt, 'its issuer-signed JWT');
  if (!SD_JWT_TYPES.includes(String(decodedJws.header.typ)))
    throw rejected(`its typ ${String(decodedJws.header.typ)} is not dc+sd-jwt`);
  const payload = decodedJws.payload as Record<string, unknown>;
  const sdAlg = payload['_sd_alg'] ?? 'sha-256';
  if (sdAlg !== 'sha-256') throw rejected(`its _sd_alg ${String(sdAlg)} is not sha-256`);
  if (typeof payload['vct'] !== 'string' || payload['vct'] === '') throw rejected('it has no vct');
  const iss = payload['iss'];
  if (iss === undefined ? requireIss : typeof iss !== 'string' || iss === '') throw rejected('it has no iss');
  return decodedJws;
}

/** The disclosures of `sdJwt` (issuer-signed JWT~disclosures~, no key binding JWT) and the claims they reveal. */
export function readDisclosures(
  sdJwt: string,
  payload: Record<string, unknown>,
): { disclosures: Disclosure[]; claims: Record<string, unknown> } {
  try {
    const { disclosures } = decodeSdJwtSync(sdJwt, hasher);
    return { disclosures, claims: getClaimsSync<Record<string, unknown>>(payload, disclosures, hasher) };
  } catch {
    throw rejected('one of its disclosures cannot be decoded');
  }
}

/** The summary of an SD-JWT VC with these claims; issuer and certificate as the caller knows them. */
export function summaryOf(
  issuerJwt: string,
  payload: Record<string, unknown>,
  claims: Record<string, unknown>,
) {
  const jti = payload['jti'];
  const summary: CredentialSummary = {
    format: 'dc+sd-jwt',
    id:
      typeof jti === 'string' && jti !== ''
        ? jti
        : createHash('sha256').update(issuerJwt).digest('base64url'),
    issuer: typeof payload['iss'] === 'string' ? payload['iss'] : '',
    type: payload['vct'] as string,
    validFrom: isoOrNull(payload['nbf']) ?? isoOrNull(payload['iat']),
    validUntil: isoOrNull(payload['exp']),
    claims,
    issuerCertificate: null,
  };
  return summary;
}

/** The holder key `cnf` names: a JWK, or a did:key in `kid`. */
export function holderOf(payload: Record<string, unknown>) {
  const cnf = payload['cnf'] as { jwk?: unknown; kid?: unknown } | undefined;
  if (cnf?.jwk && typeof cnf.jwk === 'object')
    return { kind: 'key' as const, jwk: cnf.jwk as Record<string, string> };
  if (typeof cnf?.kid === 'string' && cnf.kid.startsWith('did:key:')) {
    return { kind: 'did' as const, did: cnf.kid.split('#')[0]! };
  }
  throw rejected('it has no holder key (cnf.jwk, or cnf.kid naming a did:key)');
}

/** Where an SD-JWT VC's status is published (its issuer-signed `status` claim), or null. */
export function sdJwtStatusReference(stored: unknown, context: ParseContext): StatusReference | null {
  try {
    // `status` is never selectively disclosable: the issuer-signed JWT alone says it, and the
    // disclosures need not be hashed again on every presentation.
    const decodedJws = decodeJws(
      (stored as string).slice(0, (stored as string).indexOf('~')),
      'its issuer-signed JWT',
    );
    const status = decodedJws.payload['status'];
    if (status === undefined) return null;
    const { key } = issuerKeyOf(decodedJws, context, false);
    return tokenStatusReference(status, { kind: 'jose', key });
  } catch {
    return null;
  }
}
