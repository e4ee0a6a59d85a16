import { createPrivateKey, sign } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { CredentialFormat, HolderKey, ParseContext } from '../credential-format.ts';
import { compactListEntry, rejected } from '../credential-format.ts';
import {
  authorityOfChain,
  checkTimes,
  decodeJws,
  issuerKeyOf,
  takesAlgorithm,
  verifyIssuerSignature,
  x5cOf,
} from '../jose-credentials.ts';
import { checkIssuerNamedByCertificate } from './issuer-name.ts';
import { presentationFrameOf } from './presentation-frame.ts';
import { checkDigestsReferenced } from './referenced-digests.ts';
import {
  hasher,
  holderOf,
  readDisclosures,
  readIssuerJwt,
  SD_JWT_TYPES,
  sdJwtStatusReference,
  summaryOf,
} from './sd-jwt-parts.ts';
import { verifySdJwtPresentation } from './verify-presentation.ts';

/**
 * IETF SD-JWT VCs (`dc+sd-jwt`, OpenID4VP B.3): stored as the compact issuer-signed JWT with its
 * disclosures; presented with only the disclosures the requested claims need and a key binding
 * JWT signed by the holder key.
 */

const SD_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+~([A-Za-z0-9_-]+~)*$/;
const HOLDER_ALGORITHM = 'EdDSA';
/** Reading a stored credential for its claims needs no clock or trust anchors. */
const NO_TRUST: ParseContext = { now: new Date(0), issuerTrustAnchors: [] };

function read(value: unknown, context: ParseContext) {
  if (typeof value !== 'string' || !value.includes('~')) {
    throw rejected('a dc+sd-jwt credential is a compact SD-JWT (issuer-signed JWT~disclosure~…~)');
  }
  if (!value.endsWith('~'))
    throw rejected('it carries a key binding JWT; store the SD-JWT VC as issued, ending in ~');
  if (!SD_JWT.test(value)) throw rejected('it is not a compact SD-JWT (base64url parts separated by ~)');
  const issuerJwt = value.slice(0, value.indexOf('~'));
  const decodedJws = readIssuerJwt(issuerJwt, true);
  const payload = decodedJws.payload as Record<string, unknown>;
  const { disclosures, claims } = readDisclosures(value, payload);
  checkDigestsReferenced(payload, disclosures, hasher);
  const summary = summaryOf(issuerJwt, payload, claims);
  return { value, issuerJwt, decodedJws, summary, context };
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
      return SD_JWT_TYPES.includes(header?.typ);
    } catch {
      return false;
    }
  },
  parse(value, context) {
    const { issuerJwt, decodedJws, summary } = read(value, context);
    checkTimes(decodedJws.payload, context.now);
    const holder = holderOf(decodedJws.payload as Record<string, unknown>);
    const issuer = issuerKeyOf(decodedJws, context);
    checkIssuerNamedByCertificate(decodedJws.payload as Record<string, unknown>, issuer);
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
  issuerChain: (stored) =>
    x5cOf(decodeJws((stored as string).slice(0, (stored as string).indexOf('~')), 'its issuer-signed JWT')),
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
  statusReference: sdJwtStatusReference,
  verifyPresentation: verifySdJwtPresentation,
};
