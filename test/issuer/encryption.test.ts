// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import {
  CompactEncrypt,
  calculateJwkThumbprint,
  compactDecrypt,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTlsFront } from '../verifier/tls-front.ts';
import { type IssuerWorld, proofKey, startIssuerWorld } from './issuer-helpers.ts';

/**
 * OpenID4VCI 1.0 §10 from the wallet's side, written with jose: the request encrypted to the key
 * the issuer publishes, the answer decrypted with the wallet's own key.
 */

/** A wallet's response key: ECDH-ES on P-256 (or X25519), with the alg §10 requires. */
async function responseKey(curve: 'P-256' | 'X25519' = 'P-256') {
  const pair =
    curve === 'P-256'
      ? await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true })
      : await generateKeyPair('ECDH-ES', { crv: 'X25519', extractable: true });
  const jwk = { ...(await exportJWK(pair.publicKey)), alg: 'ECDH-ES', use: 'enc', kid: `wallet-${curve}` };
  return {
    jwk,
    async open(jwe: string) {
      const { plaintext, protectedHeader } = await compactDecrypt(jwe, pair.privateKey);
      return { header: protectedHeader, body: JSON.parse(new TextDecoder().decode(plaintext)) as any };
    },
  };
}

async function encryptTo(jwk: JWK, payload: unknown, header: Record<string, unknown> = {}) {
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: jwk.kid!, ...header })
    .encrypt(await importJWK(jwk, 'ECDH-ES'));
}

for (const kind of DATABASE_KINDS) {
  describe(`issuer, encrypted credential requests and responses (${kind})`, () => {
    let world: IssuerWorld;
    let metadata: any;
    let issuerKey: JWK;

    before(async () => {
      world = await startIssuerWorld(kind);
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
      });
      assert.equal(put.status, 201, put.text);
      const url = world.issuerId.replace(/\/issuers\//, '/.well-known/openid-credential-issuer/issuers/');
      metadata = await (await fetch(url)).json();
      issuerKey = metadata.credential_request_encryption.jwks.keys[0];
    });
    after(() => world.close());

    /** Offer (with claims, or deferred without), pre-authorized token and a c_nonce, raw HTTP. */
    async function issuance(claims: boolean) {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        ...(claims ? { claims: { degree: { given_name: 'Ada', degree: 'BSc' } } } : {}),
      });
      assert.equal(offer.status, 201, offer.text);
      const document = (await (await fetch(offer.body.data.credential_offer_uri)).json()) as any;
      const grant = document.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'];
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': grant['pre-authorized_code'],
        },
      });
      assert.equal(token.status, 200, token.text);
      const key = await proofKey();
      const nonce = (await (await fetch(`${world.issuerId}/nonce`, { method: 'POST' })).json()) as any;
      return {
        offerId: offer.body.data.id as string,
        accessToken: token.body.access_token as string,
        key,
        request: async () => ({
          credential_configuration_id: 'degree',
          proofs: { jwt: [await key.proof({ aud: world.issuerId, nonce: nonce.c_nonce })] },
        }),
      };
    }

    const post = (path: string, accessToken: string, body: string, contentType = 'application/jwt') =>
      fetch(`${world.issuerId}/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': contentType },
        body,
      });

    async function refusal(response: Response) {
      assert.equal(response.status, 400);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      return ((await response.json()) as any).error as string;
    }

    it('advertises request and response encryption: an ECDH-ES P-256 key with its kid, AES-GCM, not required', async () => {
      assert.deepEqual(metadata.credential_response_encryption, {
        alg_values_supported: ['ECDH-ES'],
        enc_values_supported: ['A128GCM', 'A256GCM'],
        encryption_required: false,
      });
      const request = metadata.credential_request_encryption;
      assert.deepEqual(request.enc_values_supported, ['A128GCM', 'A256GCM']);
      assert.equal(request.encryption_required, false);
      assert.equal(request.jwks.keys.length, 1);
      assert.equal(issuerKey.kty, 'EC');
      assert.equal(issuerKey.crv, 'P-256');
      assert.equal(issuerKey.alg, 'ECDH-ES');
      assert.equal(issuerKey.use, 'enc');
      assert.equal(issuerKey.d, undefined, 'the private part is never published');
      assert.equal(issuerKey.kid, await calculateJwkThumbprint(issuerKey));
      // Signed metadata carries the same key.
      const url = world.issuerId.replace(/\/issuers\//, '/.well-known/openid-credential-issuer/issuers/');
      const signed = await (await fetch(url, { headers: { accept: 'application/jwt' } })).text();
      assert.deepEqual((decodeJwt(signed) as any).credential_request_encryption.jwks.keys[0], issuerKey);
    });

    it('the key is stable for an issuer and differs with another master key', async () => {
      const other = await startIssuerWorld(kind);
      try {
        const url = other.issuerId.replace(/\/issuers\//, '/.well-known/openid-credential-issuer/issuers/');
        const again = (await (await fetch(url)).json()) as any;
        const otherKey = again.credential_request_encryption.jwks.keys[0];
        // Another server (another master key) has another key; each is a valid P-256 point.
        assert.notEqual(otherKey.kid, issuerKey.kid);
        await importJWK(otherKey, 'ECDH-ES');
        await importJWK(issuerKey, 'ECDH-ES');
      } finally {
        await other.close();
      }
      const url = world.issuerId.replace(/\/issuers\//, '/.well-known/openid-credential-issuer/issuers/');
      const same = (await (await fetch(url)).json()) as any;
      assert.deepEqual(same.credential_request_encryption.jwks.keys[0], issuerKey);
    });

    it('answers an encrypted request with an encrypted credential the wallet decrypts', async () => {
      const flow = await issuance(true);
      const wallet = await responseKey('P-256');
      const jwe = await encryptTo(issuerKey, {
        ...(await flow.request()),
        credential_response_encryption: { jwk: wallet.jwk, enc: 'A256GCM' },
      });
      const response = await post('credential', flow.accessToken, jwe);
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assert.equal(response.headers.get('content-type'), 'application/jwt');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const header = decodeProtectedHeader(text);
      assert.deepEqual([header.alg, header.enc, header.kid], ['ECDH-ES', 'A256GCM', 'wallet-P-256']);
      const { body } = await wallet.open(text);
      assert.equal(body.credentials.length, 1);
      assert.equal(typeof body.notification_id, 'string');
      const sdJwt = decodeJwt(body.credentials[0].credential.split('~')[0]) as any;
      assert.equal(sdJwt.iss, world.issuerId);
      assert.deepEqual(sdJwt.cnf.jwk, flow.key.jwk);
      const tracking = await world.api('GET', `/v1/issuer/offers/${flow.offerId}`);
      assert.equal(tracking.body.data.status, 'issued');
    });

    it('answers an encrypted request without credential_response_encryption in plain JSON', async () => {
      const flow = await issuance(true);
      const jwe = await encryptTo(issuerKey, await flow.request(), { enc: 'A128GCM' });
      const response = await post('credential', flow.accessToken, jwe);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(((await response.json()) as any).credentials.length, 1);
    });

    it('encrypts the deferred answer (202) and the deferred credential, each to the key of its own request', async () => {
      const flow = await issuance(false);
      const first = await responseKey('P-256');
      const response = await post(
        'credential',
        flow.accessToken,
        await encryptTo(issuerKey, {
          ...(await flow.request()),
          credential_response_encryption: { jwk: first.jwk, enc: 'A128GCM' },
        }),
      );
      const text = await response.text();
      assert.equal(response.status, 202, text);
      assert.equal(response.headers.get('content-type'), 'application/jwt');
      const { body: pending } = await first.open(text);
      assert.equal(typeof pending.transaction_id, 'string');
      const claims = await world.api('PUT', `/v1/issuer/offers/${flow.offerId}/claims`, {
        claims: { degree: { given_name: 'Grace', degree: 'MSc' } },
      });
      assert.equal(claims.status, 200, claims.text);
      // §9.1: the deferred request names a new key, which the answer must use.
      const second = await responseKey('X25519');
      const deferred = await post(
        'deferred-credential',
        flow.accessToken,
        await encryptTo(issuerKey, {
          transaction_id: pending.transaction_id,
          credential_response_encryption: { jwk: second.jwk, enc: 'A256GCM' },
        }),
      );
      const deferredText = await deferred.text();
      assert.equal(deferred.status, 200, deferredText);
      assert.equal(deferred.headers.get('content-type'), 'application/jwt');
      await assert.rejects(first.open(deferredText), 'not encrypted to the first key');
      const { body, header } = await second.open(deferredText);
      assert.equal(header.kid, 'wallet-X25519');
      assert.equal(body.credentials.length, 1);
      const sdJwt = body.credentials[0].credential as string;
      const disclosed = sdJwt
        .split('~')
        .slice(1, -1)
        .map((d) => JSON.parse(Buffer.from(d, 'base64url').toString()));
      assert.ok(disclosed.some((d: unknown[]) => d[1] === 'given_name' && d[2] === 'Grace'));
    });

    it('refuses bad encryption with invalid_encryption_parameters, in plain JSON, and issues nothing', async () => {
      const flow = await issuance(true);
      const wallet = await responseKey();
      const payload = {
        ...(await flow.request()),
        credential_response_encryption: { jwk: wallet.jwk, enc: 'A256GCM' },
      };
      const good = await encryptTo(issuerKey, payload);

      // A tampered ciphertext does not decrypt (the GCM tag fails).
      const parts = good.split('.');
      const ciphertext = Buffer.from(parts[3]!, 'base64url');
      ciphertext[0] = ciphertext[0]! ^ 1;
      parts[3] = ciphertext.toString('base64url');
      assert.equal(
        await refusal(await post('credential', flow.accessToken, parts.join('.'))),
        'invalid_encryption_parameters',
      );

      // Encrypted to another key, under the issuer's kid.
      const stranger = (await responseKey()).jwk;
      assert.equal(
        await refusal(
          await post(
            'credential',
            flow.accessToken,
            await encryptTo({ ...stranger, kid: issuerKey.kid }, payload),
          ),
        ),
        'invalid_encryption_parameters',
      );
      // Under another kid.
      assert.equal(
        await refusal(
          await post('credential', flow.accessToken, await encryptTo(issuerKey, payload, { kid: 'other' })),
        ),
        'invalid_encryption_parameters',
      );
      // An enc the issuer does not list, on the request and for the response.
      assert.equal(
        await refusal(
          await post('credential', flow.accessToken, await encryptTo(issuerKey, payload, { enc: 'A192GCM' })),
        ),
        'invalid_encryption_parameters',
      );
      assert.equal(
        await refusal(
          await post(
            'credential',
            flow.accessToken,
            await encryptTo(issuerKey, {
              ...payload,
              credential_response_encryption: { jwk: wallet.jwk, enc: 'A128CBC-HS256' },
            }),
          ),
        ),
        'invalid_encryption_parameters',
      );
      // A response "key" that is a signing key, or a private key, or lacks its alg.
      const signing = (await proofKey()).jwk;
      for (const jwk of [
        { ...signing, alg: 'ES256' },
        { ...wallet.jwk, use: 'sig' },
        { ...wallet.jwk, d: 'AAAA' },
        { kty: 'oct', k: 'AAAA', alg: 'ECDH-ES' },
        { ...wallet.jwk, alg: undefined },
        { ...wallet.jwk, alg: 'ECDH-ES+A128KW' },
      ]) {
        const response = await post(
          'credential',
          flow.accessToken,
          await encryptTo(issuerKey, { ...payload, credential_response_encryption: { jwk, enc: 'A256GCM' } }),
        );
        assert.equal(await refusal(response), 'invalid_encryption_parameters', JSON.stringify(jwk));
      }
      assert.equal(
        await refusal(
          await post(
            'credential',
            flow.accessToken,
            await encryptTo(issuerKey, {
              ...payload,
              credential_response_encryption: { jwk: wallet.jwk, alg: 'RSA-OAEP', enc: 'A256GCM' },
            }),
          ),
        ),
        'invalid_encryption_parameters',
        'an alg beside the JWK that disagrees with it',
      );
      // §8.2: asking for an encrypted answer in a plain request.
      assert.equal(
        await refusal(
          await post('credential', flow.accessToken, JSON.stringify(payload), 'application/json'),
        ),
        'invalid_encryption_parameters',
      );
      // Not a JWE at all.
      assert.equal(
        await refusal(await post('credential', flow.accessToken, 'not-a-jwe')),
        'invalid_encryption_parameters',
      );
      // A JWE of something that is not a credential request.
      assert.equal(
        await refusal(
          await post(
            'credential',
            flow.accessToken,
            await encryptTo(issuerKey, { credential_configuration_id: 5 }),
          ),
        ),
        'invalid_credential_request',
      );

      // None of this issued anything: the same offer still issues, to the wallet's key.
      const tracking = await world.api('GET', `/v1/issuer/offers/${flow.offerId}`);
      assert.notEqual(tracking.body.data.status, 'issued');
      const response = await post('credential', flow.accessToken, good);
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assert.equal((await wallet.open(text)).body.credentials.length, 1);
    });

    it('still needs the access token before it opens anything', async () => {
      const response = await post('credential', 'not-a-token', await encryptTo(issuerKey, {}));
      assert.equal(response.status, 401);
    });
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`issuer, encryption with a wallet on @openid4vc/openid4vci (${kind})`, () => {
    it('the library reads the offer, metadata, token and nonce; the request and answer travel encrypted', async () => {
      const front = await startTlsFront();
      const world = await startIssuerWorld(kind, { PUBLIC_URL: front.url });
      front.target = world.server.url;
      try {
        const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
          format: 'dc+sd-jwt',
          vct: 'https://example.edu/degree',
          claims: [{ path: ['degree'] }],
        });
        assert.equal(put.status, 201, put.text);
        const offer = await world.api('POST', '/v1/issuer/offers', {
          configuration_ids: ['degree'],
          claims: { degree: { degree: 'PhD' } },
        });
        assert.equal(offer.status, 201, offer.text);

        const holder = await generateKeyPair('ES256', { extractable: true });
        const holderJwk = await exportJWK(holder.publicKey);
        const client = new Openid4vciClient({
          callbacks: {
            fetch: front.fetch,
            hash: (data: Uint8Array, alg: string) =>
              new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(data).digest()),
            generateRandom: (length: number) => new Uint8Array(randomBytes(length)),
            signJwt: async (_signer: unknown, jwt: { header: any; payload: any }) => ({
              jwt: await new SignJWT(jwt.payload).setProtectedHeader(jwt.header).sign(holder.privateKey),
              signerJwk: holderJwk as any,
            }),
            clientAuthentication: () => {},
          } as never,
        });
        const credentialOffer = await client.resolveCredentialOffer(offer.body.data.offer_link);
        const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
        const published = issuerMetadata.credentialIssuer as any;
        assert.equal(published.credential_response_encryption.encryption_required, false);
        const issuerKey = published.credential_request_encryption.jwks.keys[0] as JWK;
        const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
          credentialOffer,
          issuerMetadata,
        });
        const { c_nonce } = await client.requestNonce({ issuerMetadata });
        const { jwt } = await client.createCredentialRequestJwtProof({
          issuerMetadata,
          credentialConfigurationId: 'degree',
          nonce: c_nonce,
          signer: { method: 'jwk', alg: 'ES256', publicJwk: holderJwk as any },
        });

        const wallet = await responseKey();
        const jwe = await encryptTo(issuerKey, {
          credential_configuration_id: 'degree',
          proofs: { jwt: [jwt] },
          // The shape the library's request type declares (drafts): alg beside the JWK, not in it.
          credential_response_encryption: {
            jwk: { ...wallet.jwk, alg: undefined },
            alg: 'ECDH-ES',
            enc: 'A128GCM',
          },
        });
        const response = await front.fetch(published.credential_endpoint, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${accessTokenResponse.access_token}`,
            'content-type': 'application/jwt',
          },
          body: jwe,
        });
        const text = await response.text();
        assert.equal(response.status, 200, text);
        assert.equal(response.headers.get('content-type'), 'application/jwt');
        const { body, header } = await wallet.open(text);
        assert.equal(header.enc, 'A128GCM');
        const issued = decodeJwt(body.credentials[0].credential.split('~')[0]) as any;
        assert.equal(issued.iss, credentialOffer.credential_issuer);
        assert.deepEqual(issued.cnf.jwk, holderJwk);
      } finally {
        await world.close();
        await front.close();
      }
    });
  });
}
