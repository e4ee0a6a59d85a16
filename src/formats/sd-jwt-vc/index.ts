import { createHash, createPrivateKey, sign } from 'node:crypto';
import { decodeSdJwtSync, getClaimsSync } from '@sd-jwt/decode';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { CredentialFormat, CredentialSummary, HolderKey, ParseContext } from '../credential-format.ts';
import { compactListEntry, rejected } from '../credential-format.ts';
import {
  authorityOfChain,
  checkTimes,
  decodeJws,
  isoOrNull,
  issuerKeyOf,
  takesAlgorithm,
  verifyIssuerSignature,
  x5cOf,
} from '../jose-credentials.ts';
import { tokenStatusReference } from '../status-entries.ts';
import { presentationFrameOf } from './presentation-frame.ts';
import { checkDigestsReferenced } from './referenced-digests.ts';

/**
 * IETF SD-JWT VCs (`dc+sd-jwt`, OpenID4VP B.3): stored as the compact issuer-signed JWT with its
 * disclosures; presented with only the disclosures the requested claims need and a key binding
 * JWT signed by the holder key.
 */

const SD_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+~([A-Za-z0-9_-]+~)*$/;
const HOLDER_ALGORITHM = 'EdDSA';
/** Reading a stored credential for its claims needs no clock or trust anchors. */
const NO_TRUST: ParseContext = { now: new Date(0), issuerTrustAnchors: [] };
const TYPES = ['dc+sd-jwt', 'vc+sd-jwt'];

const sha256 = (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash('sha256')
      .update(typeof data === 'string' ? data : Buffer.from(data))
      .digest(),
  );
const hasher = (data: string | ArrayBuffer, alg: string) => {
  if (alg.toLowerCase() !== 'sha-256') throw rejected(`its _sd_alg ${alg} is not sha-256`);
  return sha256(data);
};

function read(value: unknown, context: ParseContext) {
  if (typeof value !== 'string' || !value.includes('~')) {
    throw rejected('a dc+sd-jwt credential is a compact SD-JWT (issuer-signed JWT~disclosure~…~)');
  }
  if (!value.endsWith('~'))
    throw rejected('it carries a key binding JWT; store the SD-JWT VC as issued, ending in ~');
  if (!SD_JWT.test(value)) throw rejected('it is not a compact SD-JWT (base64url parts separated by ~)');
  const issuerJwt = value.slice(0, value.indexOf('~'));
  const decodedJws = decodeJws(issuerJwt, 'its issuer-signed JWT');
  if (!TYPES.includes(String(decodedJws.header.typ)))
    throw rejected(`its typ ${String(decodedJws.header.typ)} is not dc+sd-jwt`);
  const payload = decodedJws.payload as Record<string, unknown>;
  const sdAlg = payload['_sd_alg'] ?? 'sha-256';
  if (sdAlg !== 'sha-256') throw rejected(`its _sd_alg ${String(sdAlg)} is not sha-256`);
  if (typeof payload['vct'] !== 'string' || payload['vct'] === '') throw rejected('it has no vct');
  if (typeof payload['iss'] !== 'string' || payload['iss'] === '') throw rejected('it has no iss');
  let decoded: ReturnType<typeof decodeSdJwtSync>;
  let claims: Record<string, unknown>;
  try {
    decoded = decodeSdJwtSync(value, hasher);
    claims = getClaimsSync<Record<string, unknown>>(decoded.jwt.payload, decoded.disclosures, hasher);
  } catch {
    throw rejected('one of its disclosures cannot be decoded');
  }
  checkDigestsReferenced(payload, decoded.disclosures, hasher);
  const jti = payload['jti'];
  const summary: CredentialSummary = {
    format: 'dc+sd-jwt',
    id:
      typeof jti === 'string' && jti !== ''
        ? jti
        : createHash('sha256').update(issuerJwt).digest('base64url'),
    issuer: payload['iss'] as string,
    type: payload['vct'] as string,
    validFrom: isoOrNull(payload['nbf']) ?? isoOrNull(payload['iat']),
    validUntil: isoOrNull(payload['exp']),
    claims,
    issuerCertificate: null,
  };
  return { value, issuerJwt, decodedJws, summary, context };
}

function holderOf(payload: Record<string, unknown>) {
  const cnf = payload['cnf'] as { jwk?: unknown; kid?: unknown } | undefined;
  if (cnf?.jwk && typeof cnf.jwk === 'object')
    return { kind: 'key' as const, jwk: cnf.jwk as Record<string, string> };
  if (typeof cnf?.kid === 'string' && cnf.kid.startsWith('did:key:')) {
    return { kind: 'did' as const, did: cnf.kid.split('#')[0]! };
  }
  throw rejected('it has no holder key (cnf.jwk, or cnf.kid naming a did:key)');
}

/**
 * The key binding algorithm of a holder key: EdDSA for the account's hosted Ed25519 key, ES256
 * for the P-256 keys proved to OpenID4VCI issuers.
 */
const holderAlgorithmOf = (jwk: { kty?: unknown; crv?: unknown }) =>
  jwk.kty === 'EC' && jwk.crv === 'P-256' ? 'ES256' : HOLDER_ALGORITHM;

/** A key binding JWT signer for the holder's key (the library calls it with the signing input). */
const kbSignerOf = (holder: HolderKey) => {
  const key = createPrivateKey({ key: holder.privateJwk, format: 'jwk' });
  const algorithm = holderAlgorithmOf(holder.privateJwk);
  return (data: string) =>
    (algorithm === 'ES256'
      ? sign('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' })
      : sign(null, Buffer.from(data), key)
    ).toString('base64url');
};

export const sdJwtVcFormat: CredentialFormat = {
  id: 'dc+sd-jwt',
  shape: 'compact-sd-jwt',
  disclosesEverything: false,
  recognises(value) {
    if (typeof value !== 'string' || !value.includes('~')) return false;
    try {
      const header = JSON.parse(Buffer.from(value.split('.')[0]!, 'base64url').toString('utf8'));
      return TYPES.includes(header?.typ);
    } catch {
      return false;
    }
  },
  parse(value, context) {
    const { issuerJwt, decodedJws, summary } = read(value, context);
    checkTimes(decodedJws.payload, context.now);
    const holder = holderOf(decodedJws.payload as Record<string, unknown>);
    const issuer = issuerKeyOf(decodedJws, context);
    return {
      summary: { ...summary, issuerCertificate: issuer.certificate },
      holder,
      stored: value,
      verify: async () => {
        await verifyIssuerSignature(issuerJwt, decodedJws, issuer);
        return {};
      },
    };
  },
  summarize(stored, context) {
    const { decodedJws, summary } = read(stored, context);
    const x5c = decodedJws.header.x5c;
    return Array.isArray(x5c)
      ? { ...summary, issuerCertificate: issuerKeyOf(decodedJws, context, false).certificate }
      : summary;
  },
  listEntry: compactListEntry,
  async dcqlInput(stored, summary) {
    const x5c = x5cOf(
      decodeJws((stored as string).slice(0, (stored as string).indexOf('~')), 'its issuer-signed JWT'),
    );
    const authority = x5c ? authorityOfChain(x5c) : undefined;
    return {
      credential_format: 'dc+sd-jwt',
      vct: summary.type as string,
      claims: summary.claims,
      ...(authority ? { authority } : {}),
    };
  },
  verifierCanVerify(stored, parameters, holderBinding) {
    if (parameters === undefined) return false;
    const { header, payload } = decodeJws(
      (stored as string).slice(0, (stored as string).indexOf('~')),
      'its issuer-signed JWT',
    );
    const cnfJwk = (payload['cnf'] as { jwk?: { kty?: unknown; crv?: unknown } } | undefined)?.jwk ?? {};
    return (
      takesAlgorithm(parameters['sd-jwt_alg_values'], header.alg) &&
      (!holderBinding || takesAlgorithm(parameters['kb-jwt_alg_values'], holderAlgorithmOf(cnfJwk)))
    );
  },
  async present({ stored, disclosed, holder, audience, keyBindingClaims }) {
    const instance = new SDJwtVcInstance({
      hasher: async (data, alg) => hasher(data, alg),
      hashAlg: 'sha-256',
      ...(holder ? { kbSigner: kbSignerOf(holder), kbSignAlg: holderAlgorithmOf(holder.privateJwk) } : {}),
    });
    const frame = presentationFrameOf(read(stored, NO_TRUST).summary.claims, disclosed);
    return instance.present(stored as string, frame as never, {
      ...(holder
        ? {
            kb: {
              payload: {
                ...keyBindingClaims,
                aud: audience.clientId,
                nonce: audience.nonce,
                iat: Math.floor(Date.now() / 1000),
              },
            },
          }
        : {}),
    });
  },
  statusReference(stored, context) {
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
  },
};
