import { createHash } from 'node:crypto';
import type { CredentialSummary, ParseContext, StatusReference } from '../credential-format.ts';
import { rejected } from '../credential-format.ts';
import { decodeJws, isoOrNull, issuerKeyOf } from '../jose-credentials.ts';
import { bitstringStatusReference } from '../status-entries.ts';

/**
 * Reading a VC-JWT (VC Data Model 1.1 `vc` claim), shared by the store (index.ts) and the
 * verifier (verify-presentation.ts).
 */

export const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

type Vc = Record<string, unknown>;

/** The VC-JWT's header and claims, its policy checked (issuer and subject DIDs); no signature checked. */
export function readVcJwt(value: unknown) {
  if (typeof value !== 'string' || !COMPACT_JWS.test(value))
    throw rejected('a jwt_vc_json credential is a compact JWS');
  const decoded = decodeJws(value, 'the VC-JWT');
  const vc = decoded.payload['vc'];
  if (vc === null || typeof vc !== 'object' || Array.isArray(vc))
    throw rejected('its payload has no vc object');
  const types = (vc as Vc)['type'];
  if (!Array.isArray(types) || !types.includes('VerifiableCredential')) {
    throw rejected('its vc.type does not include VerifiableCredential');
  }
  const { iss, sub, jti } = decoded.payload;
  if (typeof iss !== 'string' || !iss.startsWith('did:')) throw rejected('its iss is not the issuer DID');
  if (typeof sub !== 'string' || !sub.startsWith('did:')) throw rejected("its sub is not the holder's DID");
  const subject = (vc as Vc)['credentialSubject'] as { id?: unknown } | undefined;
  if (subject?.id !== undefined && subject.id !== sub)
    throw rejected('its vc.credentialSubject.id is not its sub');
  const summary: CredentialSummary = {
    format: 'jwt_vc_json',
    id:
      typeof jti === 'string'
        ? jti
        : typeof (vc as Vc)['id'] === 'string'
          ? ((vc as Vc)['id'] as string)
          : createHash('sha256').update(value).digest('base64url'),
    issuer: iss,
    type: types as string[],
    validFrom: isoOrNull(decoded.payload.nbf) ?? isoOrNull(decoded.payload.iat),
    validUntil: isoOrNull(decoded.payload.exp),
    claims: vc as Vc,
    issuerCertificate: null,
  };
  return { jwt: value, decoded, summary, sub };
}

/** Where a VC-JWT's status is published; null when it has no entry Coffer can use (never throws). */
export function vcJwtStatusReference(stored: unknown, context: ParseContext): StatusReference | null {
  try {
    const { decoded, summary } = readVcJwt(stored);
    // VC 1.1 puts it in `vc`; a VC 2.0 JWT may carry it as a top-level claim.
    const credentialStatus = summary.claims['credentialStatus'] ?? decoded.payload['credentialStatus'];
    if (credentialStatus === undefined) return null;
    const { key } = issuerKeyOf(decoded, context, false);
    return bitstringStatusReference(credentialStatus, { kind: 'jose', key });
  } catch {
    return null;
  }
}
