import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { chainOf, type IssuerIdentity } from './issuer-ca.ts';

/**
 * A VC-JWT issuer (VC Data Model 1.1 as a JWT, jwt_vc_json) made with jose, identified by a
 * did:jwk; given an X.509 identity, it signs with the document signer's key (its did:jwk) and
 * carries the chain in `x5c`.
 */
export interface JwtVcIssuer {
  did: string;
  issue(options: {
    subject: string;
    claims?: Record<string, unknown>;
    exp?: number;
    alg?: 'ES256' | 'EdDSA';
    /** The vc's credentialStatus (e.g. a BitstringStatusListEntry); none by default. */
    credentialStatus?: unknown;
  }): Promise<string>;
}

export async function createJwtVcIssuer(identity?: IssuerIdentity): Promise<JwtVcIssuer> {
  const { privateKey, publicKey } = identity
    ? identity.signer.keys
    : await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const did = `did:jwk:${Buffer.from(JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y })).toString('base64url')}`;
  return {
    did,
    async issue({ subject, claims, exp, credentialStatus }) {
      const id = `urn:uuid:${randomUUID()}`;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        vc: {
          '@context': ['https://www.w3.org/2018/credentials/v1'],
          id,
          type: ['VerifiableCredential', 'UniversityDegreeCredential'],
          credentialSubject: {
            id: subject,
            ...(claims ?? { degree: { type: 'BachelorDegree', name: 'Mathematics' }, given_name: 'Ada' }),
          },
          ...(credentialStatus === undefined ? {} : { credentialStatus }),
        },
      })
        .setProtectedHeader({
          alg: 'ES256',
          typ: 'JWT',
          kid: `${did}#0`,
          ...(identity ? { x5c: chainOf(identity) } : {}),
        })
        .setIssuer(did)
        .setSubject(subject)
        .setJti(id)
        .setNotBefore(now - 60)
        .setIssuedAt(now - 60)
        .setExpirationTime(exp ?? now + 3600)
        .sign(privateKey);
    },
  };
}
