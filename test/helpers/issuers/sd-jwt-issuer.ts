import { createHash, type JsonWebKey, randomBytes, randomUUID } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { DisclosureFrame } from '@sd-jwt/types';
import { chainOf, ISSUER_HOST, type IssuerIdentity } from './issuer-ca.ts';

/**
 * An SD-JWT VC issuer built on the OpenWallet Foundation's @sd-jwt/sd-jwt-vc: ES256 over the
 * document-signer certificate of `identity` (x5c), bound to the holder's key by `cnf.jwk`.
 */

export const PID_VCT = 'https://credentials.example.com/identity_credential';

export const PID_CLAIMS = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birthdate: '1815-12-10',
  email: 'ada@example.com',
  phone_number: '+44 20 7946 0000',
  nationalities: ['GB', 'FR'],
  address: { street_address: '12 St James Square', locality: 'London', country: 'GB' },
  is_over_18: true,
  is_over_21: true,
};

const PID_FRAME = {
  _sd: [
    'given_name',
    'family_name',
    'birthdate',
    'email',
    'phone_number',
    'nationalities',
    'address',
    'is_over_18',
    'is_over_21',
  ],
  nationalities: { _sd: [0, 1] },
  address: { _sd: ['street_address', 'locality', 'country'] },
};

export const sha256 = (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash('sha256')
      .update(typeof data === 'string' ? data : Buffer.from(data))
      .digest(),
  );

export interface SdJwtOptions {
  holderJwk: JsonWebKey;
  claims?: Record<string, unknown>;
  disclosureFrame?: Record<string, unknown>;
  jti?: string | null;
  /** Seconds since the epoch; one hour from now by default. */
  exp?: number;
  vct?: string;
  /** The issuer's identifier; https://ISSUER_HOST by default. */
  iss?: string;
}

export async function issueSdJwtVc(identity: IssuerIdentity, options: SdJwtOptions): Promise<string> {
  const instance = new SDJwtVcInstance({
    hasher: async (data) => sha256(data),
    hashAlg: 'sha-256',
    saltGenerator: async () => randomBytes(16).toString('base64url'),
    signer: async (data) =>
      Buffer.from(
        await crypto.subtle.sign(
          { name: 'ECDSA', hash: 'SHA-256' },
          identity.signer.keys.privateKey,
          new TextEncoder().encode(data),
        ),
      ).toString('base64url'),
    signAlg: 'ES256',
  });
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: options.iss ?? `https://${ISSUER_HOST}`,
    vct: options.vct ?? PID_VCT,
    iat: now,
    exp: options.exp ?? now + 3600,
    ...(options.jti === null ? {} : { jti: options.jti ?? `urn:uuid:${randomUUID()}` }),
    cnf: { jwk: options.holderJwk },
    ...(options.claims ?? PID_CLAIMS),
  };
  return instance.issue(payload, (options.disclosureFrame ?? PID_FRAME) as DisclosureFrame<typeof payload>, {
    header: { typ: 'dc+sd-jwt', x5c: chainOf(identity) },
  });
}
