import { createHash, randomBytes } from 'node:crypto';
import { DateOnly } from '@owf/mdoc';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { DisclosureFrame } from '@sd-jwt/types';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  SignJWT,
} from 'jose';
import { chainOf } from '../../helpers/issuers/issuer-ca.ts';
import { issueMdoc } from '../../helpers/issuers/mdoc-issuer.ts';
import { deviceKey, presentMdoc, transcriptOf } from '../../helpers/mdoc-device-response.ts';
import { fail, type Json, type WalletEnv } from './env.ts';
import { MDL_NAMESPACE, PID_VCT } from './variants.ts';

/**
 * What the suite's wallet presents, made with other people's libraries (@sd-jwt/sd-jwt-vc and jose
 * for the SD-JWT VC and its key binding JWT, @owf/mdoc and cborg for the mDL), and the suite's ways
 * of spoiling a presentation for the negative modules.
 */

const sha256 = (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash('sha256')
      .update(typeof data === 'string' ? data : Buffer.from(data))
      .digest(),
  );

/** The PID the suite issues itself (ARF PID rulebook): given and family name, birth date, nationality, place of birth. */
const PID_CLAIMS = {
  given_name: 'Jean',
  family_name: 'Dupont',
  birthdate: '1980-05-23',
  nationalities: ['FR'],
  place_of_birth: { country: 'DD' },
};
const PID_FRAME = {
  _sd: ['given_name', 'family_name', 'birthdate', 'nationalities', 'place_of_birth'],
  nationalities: { _sd: [0] },
  place_of_birth: { _sd: ['country'] },
  _sd_decoy: 3,
};
export const PRESENTED_PID = { given_name: 'Jean', family_name: 'Dupont', birthdate: '1980-05-23' };

/** The ISO mDL the suite presents. */
const MDL_ELEMENTS = {
  given_name: 'Jean',
  family_name: 'Dupont',
  birth_date: new DateOnly('1980-05-23'),
  age_over_18: true,
  document_number: 'FR-7741',
};
export const PRESENTED_MDL = { given_name: 'Jean', family_name: 'Dupont', birth_date: '1980-05-23' };

/** Which variation of the suite's SD-JWT+KB a module makes (the suite's CreateSdJwtKbCredential subclasses). */
export type SdJwtVariation =
  | 'CreateSdJwtKbCredential'
  | 'CreateSdJwtKbCredentialWithMinimalCnf'
  | 'CreateSdJwtKbCredentialWithInvalidSdHash'
  | 'CreateSdJwtKbCredentialWithInvalidAud'
  | 'CreateSdJwtKbCredentialWithIatInPast'
  | 'CreateSdJwtKbCredentialWithIatInFuture';

const YEAR = 365 * 86400;

/** The key binding JWT (RFC 9901 §4.3): typ kb+jwt, ES256, iat, aud, nonce, sd_hash. */
async function keyBindingJwt(
  holder: CryptoKey,
  claims: { iat: number; aud: string; nonce: string; sd_hash: string },
) {
  return new SignJWT(claims as unknown as JWTPayload)
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(holder);
}

const sdHashOf = (sdJwt: string) => Buffer.from(sha256(sdJwt)).toString('base64url');

/** The presentation frame for what the DCQL query asks (claim names by path), as the suite discloses only those. */
function frameOf(dcql: Json): Record<string, unknown> {
  const frame: Record<string, Json> = {};
  for (const credential of dcql.credentials as Json[]) {
    for (const claim of (credential.claims ?? []) as Json[]) {
      let level = frame;
      const path = (claim.path as Json[]).filter((part) => typeof part === 'string');
      path.forEach((part, i) => {
        if (i === path.length - 1) level[part] = level[part] ?? true;
        else level = level[part] = typeof level[part] === 'object' ? level[part] : {};
      });
    }
  }
  return frame;
}

/**
 * CreateSdJwtKbCredential and its variations: an SD-JWT VC (vct urn:eudi:pid:1, iss the suite's
 * base URL, iat now, exp in 14 days, three decoy digests, signed ES256 with the suite's signer
 * and its x5c, cnf.jwk a fresh holder key) disclosing what the query asks, and a key binding JWT
 * for the request's client_id and nonce.
 */
export async function createSdJwtKbCredential(env: WalletEnv, variation: SdJwtVariation, elsewhere = false) {
  const { baseUrl } = env.world;
  const credentialSigner = elsewhere ? env.world.signerNamingElsewhere : env.world.credentialSigner;
  const holder = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(holder.publicKey);
  // The suite's holder keys carry kid, use and alg; the minimal variation strips all but kty/crv/x/y.
  const cnfJwk =
    variation === 'CreateSdJwtKbCredentialWithMinimalCnf'
      ? { kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x, y: publicJwk.y }
      : { ...publicJwk, kid: await calculateJwkThumbprint(publicJwk), use: 'sig', alg: 'ES256' };
  const instance = new SDJwtVcInstance({
    hasher: async (data) => sha256(data),
    hashAlg: 'sha-256',
    saltGenerator: async () => randomBytes(16).toString('base64url'),
    signer: async (data) =>
      Buffer.from(
        await crypto.subtle.sign(
          { name: 'ECDSA', hash: 'SHA-256' },
          credentialSigner.signer.keys.privateKey,
          new TextEncoder().encode(data),
        ),
      ).toString('base64url'),
    signAlg: 'ES256',
  });
  const iat = Math.floor(Date.now() / 1000);
  const payload = {
    vct: PID_VCT,
    iss: baseUrl,
    iat,
    exp: iat + 14 * 86400,
    cnf: { jwk: cnfJwk },
    ...PID_CLAIMS,
  };
  const issued = await instance.issue(payload, PID_FRAME as DisclosureFrame<typeof payload>, {
    header: { typ: 'dc+sd-jwt', x5c: chainOf(credentialSigner) },
  });
  const sdJwt = await instance.present(issued, frameOf(env.dcql) as never);
  const aud = env.client.client_id ?? fail('there is no client_id to bind the presentation to');
  const sdHash = sdHashOf(sdJwt);
  const kb = await keyBindingJwt(holder.privateKey, {
    iat:
      variation === 'CreateSdJwtKbCredentialWithIatInPast'
        ? iat - YEAR
        : variation === 'CreateSdJwtKbCredentialWithIatInFuture'
          ? iat + YEAR
          : iat,
    aud: variation === 'CreateSdJwtKbCredentialWithInvalidAud' ? `${aud}INVALID` : aud,
    nonce: env.nonce,
    sd_hash: variation === 'CreateSdJwtKbCredentialWithInvalidSdHash' ? `${sdHash}INVALID` : sdHash,
  });
  env.credential = sdJwt + kb;
  env.holderPrivateJwk = await exportJWK(holder.privateKey);
}

/** The suite's way of spoiling a JWS: every byte of its signature XORed with 0x5A. */
export function invalidateSignature(jws: string): string {
  const [header, payload, signature] = jws.split('.');
  const flipped = Buffer.from(signature!, 'base64url').map((byte) => byte ^ 0x5a);
  return `${header}.${payload}.${Buffer.from(flipped).toString('base64url')}`;
}

/** InvalidateSdJwtKbSignature: the key binding JWT's signature spoiled. */
export function invalidateSdJwtKbSignature(env: WalletEnv) {
  const cut = env.credential.lastIndexOf('~');
  if (cut < 0 || cut === env.credential.length - 1) fail('the SD-JWT has no key binding JWT');
  env.credential = env.credential.slice(0, cut + 1) + invalidateSignature(env.credential.slice(cut + 1));
}

/**
 * InvalidateSdJwtCredentialSignature: the issuer's signature spoiled, then the key binding JWT
 * made again over the changed SD-JWT (sd_hash updated), so only the issuer signature is wrong.
 */
export async function invalidateSdJwtCredentialSignature(env: WalletEnv) {
  const cut = env.credential.lastIndexOf('~');
  const kb = env.credential.slice(cut + 1);
  if (!kb) fail('the SD-JWT has no key binding JWT');
  const first = env.credential.indexOf('~');
  const sdJwt = invalidateSignature(env.credential.slice(0, first)) + env.credential.slice(first, cut + 1);
  const claims = decodeJwt(kb) as { iat: number; aud: string; nonce: string };
  const holder = (await importJWK(env.holderPrivateJwk as JWK, 'ES256')) as CryptoKey;
  const resigned = await keyBindingJwt(holder, {
    iat: claims.iat,
    aud: claims.aud,
    nonce: claims.nonce,
    sd_hash: sdHashOf(sdJwt),
  });
  env.credential = sdJwt + resigned;
}

/** InvalidateNonce: the nonce the presentation will be bound to is the request's with INVALID appended. */
export function invalidateNonce(env: WalletEnv) {
  env.nonce = `${env.nonce}INVALID`;
}

/** CreateMDocGeneratedNonce: the mdoc generated nonce (kept by the suite; OpenID4VP 1.0's transcript no longer uses it). */
export function createMdocGeneratedNonce(_env: WalletEnv) {
  return randomBytes(16).toString('base64url');
}

/**
 * CreateVP1FinalVerifierIsoMdocRedirectSessionTranscript(Unencrypted|Encrypted) (B.2.6.1): the
 * OpenID4VPHandover over client_id, nonce, the SHA-256 JWK thumbprint of the first key of
 * client_metadata.jwks (encrypted) or null, and response_uri.
 */
export async function createIsoMdocRedirectSessionTranscript(env: WalletEnv, encrypted: boolean) {
  const clientId = env.client.client_id ?? fail('there is no client_id for the transcript');
  const responseUri = env.effective.response_uri;
  let thumbprint: Uint8Array | null = null;
  if (encrypted) {
    const key = env.effective.client_metadata?.jwks?.keys?.[0];
    if (!key) fail('an encrypted response was requested but client_metadata.jwks has no key');
    thumbprint = Buffer.from(await calculateJwkThumbprint(key as JWK, 'sha256'), 'base64url');
  }
  env.sessionTranscript = transcriptOf({ clientId, nonce: env.nonce, thumbprint, responseUri });
}

/**
 * CreateMdocCredential: a DeviceResponse for the mDL the query asks for, issued over the suite's
 * signer, disclosing only the requested elements, the device signature over the session transcript.
 */
export async function createMdocCredential(env: WalletEnv) {
  const transcript = env.sessionTranscript ?? fail('there is no session transcript');
  const device = deviceKey('P-256');
  const mdoc = await issueMdoc(env.world.credentialSigner, {
    deviceJwk: device.publicJwk,
    elements: MDL_ELEMENTS,
  });
  const query = (env.dcql.credentials as Json[]).find((credential) => credential.format === 'mso_mdoc');
  const disclose = ((query?.claims ?? []) as Json[])
    .filter((claim) => claim.path?.[0] === MDL_NAMESPACE)
    .map((claim) => claim.path[1] as string);
  env.credential = presentMdoc(mdoc, { disclose, transcript, device });
}
