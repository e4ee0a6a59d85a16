import { createPrivateKey, randomUUID } from 'node:crypto';
import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { SignJWT } from 'jose';
import type { CredentialFormat } from '../credential-format.ts';
import { compactListEntry } from '../credential-format.ts';
import {
  authorityOfChain,
  checkTimes,
  decodeJws,
  issuerKeyOf,
  takesAlgorithm,
  verifyIssuerSignature,
  x5cOf,
} from '../jose-credentials.ts';
import { expandedTypes } from '../w3c-types.ts';
import { COMPACT_JWS, readVcJwt, vcJwtStatusReference } from './vc-jwt.ts';
import { verifyJwtVcPresentation } from './verify-presentation.ts';

/**
 * W3C VC Data Model 1.1 credentials secured as a JWT (`jwt_vc_json`, OpenID4VP B.1.3.1): stored
 * as the compact JWS; presented whole inside a VP JWT signed by the holder key, since the format
 * cannot disclose less.
 */

const HOLDER_ALGORITHM = 'EdDSA';

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
      const { jwt, decoded, summary, sub } = readVcJwt(value);
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
    summarize: (stored) => readVcJwt(stored).summary,
    listEntry: compactListEntry,
    issuerChain: (stored) => x5cOf(decodeJws(stored as string, 'the VC-JWT')),
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
    statusReference: vcJwtStatusReference,
    verifyPresentation: (presented, expected) => verifyJwtVcPresentation(presented, expected, jsonLd),
  };
}
