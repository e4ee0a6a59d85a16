import assert from 'node:assert/strict';
import { createHash, createPublicKey, type JsonWebKey, verify, X509Certificate } from 'node:crypto';
import { base64url, DeviceResponse, Verifier } from '@owf/mdoc';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import * as cborg from 'cborg';
import { calculateJwkThumbprint, decodeJwt, type JWK, jwtVerify } from 'jose';
import type { IssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { testMdocContext } from '../helpers/issuers/mdoc-issuer.ts';
import { sha256 } from '../helpers/issuers/sd-jwt-issuer.ts';

/**
 * What a verifier checks in the vp_token entries of the compact formats, with the field's own
 * libraries (@sd-jwt/sd-jwt-vc, @owf/mdoc with the test's crypto, jose) and a SessionTranscript
 * the test computes itself: never with Coffer's code.
 */

export interface Audience {
  clientId: string;
  nonce: string;
  /** response_uri, or redirect_uri for fragment responses. */
  responseUri: string;
  /** The verifier's response encryption key, for direct_post.jwt. */
  encryptionJwk: JWK | null;
}

/** An SD-JWT VC presentation: issuer signature, digests, KB-JWT (aud, nonce, sd_hash); returns the disclosed claims. */
export async function checkSdJwtPresentation(
  presentation: unknown,
  issuer: IssuerIdentity,
  holderJwk: JsonWebKey,
  audience: Audience,
): Promise<Record<string, unknown>> {
  assert.equal(typeof presentation, 'string');
  const text = presentation as string;
  const issuerKey = new X509Certificate(Buffer.from(issuer.signer.der, 'base64')).publicKey;
  const holderKey = createPublicKey({ key: holderJwk, format: 'jwk' });
  const instance = new SDJwtVcInstance({
    hasher: async (data) => sha256(data),
    hashAlg: 'sha-256',
    verifier: async (data, signature) =>
      verify(
        'sha256',
        Buffer.from(data),
        { key: issuerKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      ),
    // EdDSA for the account's hosted key; ES256 (raw r||s) for a P-256 key proved to an issuer.
    kbVerifier: async (data, signature) =>
      holderKey.asymmetricKeyType === 'ec'
        ? verify(
            'sha256',
            Buffer.from(data),
            { key: holderKey, dsaEncoding: 'ieee-p1363' },
            Buffer.from(signature, 'base64url'),
          )
        : verify(null, Buffer.from(data), holderKey, Buffer.from(signature, 'base64url')),
  });
  const result = await instance.verify(text, { keyBindingNonce: audience.nonce });
  const kb = result.kb!;
  assert.equal(kb.header.typ, 'kb+jwt');
  assert.equal(kb.payload.aud, audience.clientId);
  assert.equal(kb.payload.nonce, audience.nonce);
  const presented = text.slice(0, text.lastIndexOf('~') + 1);
  assert.equal(kb.payload.sd_hash, createHash('sha256').update(presented).digest('base64url'));
  assert.ok(Math.abs(Number(kb.payload.iat) - Date.now() / 1000) < 120);
  return (await instance.getClaims(text)) as Record<string, unknown>;
}

/** The claims a verifier learns beyond what every SD-JWT VC shows (iss, vct, cnf, times, jti). */
export function selectivelyDisclosed(claims: Record<string, unknown>): Record<string, unknown> {
  const { iss: _i, vct: _v, iat: _a, exp: _e, nbf: _n, cnf: _c, jti: _j, status: _s, ...rest } = claims;
  return rest;
}

/** The OpenID4VP 1.0 SessionTranscript (B.2.6.1), computed here with cborg. */
export async function sessionTranscriptOf(audience: Audience): Promise<Uint8Array> {
  const thumbprint = audience.encryptionJwk
    ? Buffer.from(await calculateJwkThumbprint(audience.encryptionJwk, 'sha256'), 'base64url')
    : null;
  const info = cborg.encode([audience.clientId, audience.nonce, thumbprint, audience.responseUri]);
  return cborg.encode([null, null, ['OpenID4VPHandover', createHash('sha256').update(info).digest()]]);
}

/** An mdoc DeviceResponse: issuer chain to the CA, digests, DeviceSignature over the transcript; returns the elements disclosed. */
export async function checkMdocPresentation(
  presentation: unknown,
  issuer: IssuerIdentity,
  audience: Audience,
): Promise<Record<string, string[]>> {
  assert.equal(typeof presentation, 'string');
  const bytes = base64url.decode(presentation as string);
  await Verifier.verifyDeviceResponse(
    {
      deviceResponse: bytes,
      sessionTranscript: await sessionTranscriptOf(audience),
      trustedCertificates: [new Uint8Array(Buffer.from(issuer.ca.der, 'base64'))],
    },
    testMdocContext,
  );
  const response = DeviceResponse.decode(bytes);
  const [document] = response.documents!;
  const disclosed: Record<string, string[]> = {};
  for (const [namespace, items] of document!.issuerSigned.issuerNamespaces?.issuerNamespaces ?? new Map()) {
    disclosed[namespace] = items.map((item) => item.elementIdentifier).sort();
  }
  return disclosed;
}

/** A VP JWT around a VC-JWT: holder signature, aud, nonce, and the issuer's VC inside, whole. */
export async function checkJwtVpPresentation(
  presentation: unknown,
  holderDid: string,
  holderJwk: JsonWebKey,
  audience: Audience,
  storedVc: string,
): Promise<void> {
  assert.equal(typeof presentation, 'string');
  const { payload, protectedHeader } = await jwtVerify(
    presentation as string,
    createPublicKey({ key: holderJwk, format: 'jwk' }),
    {
      audience: audience.clientId,
      issuer: holderDid,
    },
  );
  assert.equal(protectedHeader.alg, 'EdDSA');
  assert.equal(payload['nonce'], audience.nonce);
  const vp = payload['vp'] as { verifiableCredential: string[]; holder: string };
  assert.deepEqual(vp.verifiableCredential, [storedVc]);
  assert.equal(decodeJwt(storedVc).sub, holderDid);
}
