import { createHash, createPrivateKey, randomUUID } from 'node:crypto';
import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { SignJWT } from 'jose';
import type { CredentialFormat, CredentialSummary, ParseContext } from '../credential-format.ts';
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
import { bitstringStatusReference } from '../status-entries.ts';
import { expandedTypes } from '../w3c-types.ts';

/**
 * W3C VC Data Model 1.1 credentials secured as a JWT (`jwt_vc_json`, OpenID4VP B.1.3.1): stored
 * as the compact JWS; presented whole inside a VP JWT signed by the holder key, since the format
 * cannot disclose less.
 */

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const HOLDER_ALGORITHM = 'EdDSA';

type Vc = Record<string, unknown>;

function read(value: unknown, context: ParseContext) {
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
  return { jwt: value, decoded, summary, sub, context };
}

/** jwt_vc_json, with the JSON-LD contexts its DCQL `type_values` are expanded by. */
export function createJwtVcJsonFormat(jsonLd: JsonLdOptions): CredentialFormat {
  return {
    id: 'jwt_vc_json',
    shape: 'compact-jws',
    disclosesEverything: true,
    recognises(value) {
      if (typeof value !== 'string' || !COMPACT_JWS.test(value)) return false;
      try {
        const payload = JSON.parse(Buffer.from(value.split('.')[1]!, 'base64url').toString('utf8'));
        return payload !== null && typeof payload === 'object' && typeof payload.vc === 'object';
      } catch {
        return false;
      }
    },
    parse(value, context) {
      const { jwt, decoded, summary, sub } = read(value, context);
      checkTimes(decoded.payload, context.now);
      const issuer = issuerKeyOf(decoded, context);
      return {
        summary: { ...summary, issuerCertificate: issuer.certificate },
        holder: { kind: 'did', did: sub },
        stored: jwt,
        verify: async () => {
          await verifyIssuerSignature(jwt, decoded, issuer);
          return {};
        },
      };
    },
    summarize: (stored, context) => read(stored, context).summary,
    listEntry: compactListEntry,
    async dcqlInput(stored, summary) {
      const x5c = x5cOf(decodeJws(stored as string, 'the VC-JWT'));
      const authority = x5c ? authorityOfChain(x5c) : undefined;
      return {
        credential_format: 'jwt_vc_json',
        type: await expandedTypes(summary.claims, jsonLd),
        claims: summary.claims,
        ...(authority ? { authority } : {}),
      };
    },
    verifierCanVerify(stored, parameters, holderBinding) {
      if (parameters === undefined) return false;
      const alg = decodeJws(stored as string, 'the VC-JWT').header.alg;
      const algorithms = parameters['alg_values'];
      return (
        takesAlgorithm(algorithms, alg) && (!holderBinding || takesAlgorithm(algorithms, HOLDER_ALGORITHM))
      );
    },
    async present({ stored, holder, audience }) {
      if (!holder) return stored as string;
      const fragment = holder.did.slice('did:key:'.length);
      return new SignJWT({
        nonce: audience.nonce,
        vp: {
          '@context': ['https://www.w3.org/2018/credentials/v1'],
          type: ['VerifiablePresentation'],
          holder: holder.did,
          verifiableCredential: [stored],
        },
      })
        .setProtectedHeader({ alg: HOLDER_ALGORITHM, typ: 'JWT', kid: `${holder.did}#${fragment}` })
        .setIssuer(holder.did)
        .setAudience(audience.clientId)
        .setIssuedAt()
        .setJti(`urn:uuid:${randomUUID()}`)
        .sign(createPrivateKey({ key: holder.privateJwk, format: 'jwk' }));
    },
    statusReference(stored, context) {
      try {
        const { decoded, summary } = read(stored, context);
        // VC 1.1 puts it in `vc`; a VC 2.0 JWT may carry it as a top-level claim.
        const credentialStatus = summary.claims['credentialStatus'] ?? decoded.payload['credentialStatus'];
        if (credentialStatus === undefined) return null;
        const { key } = issuerKeyOf(decoded, context, false);
        return bitstringStatusReference(credentialStatus, { kind: 'jose', key });
      } catch {
        return null;
      }
    },
  };
}
