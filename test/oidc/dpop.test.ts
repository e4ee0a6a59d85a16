import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  type JWK,
  SignJWT,
} from 'jose';
import * as oidc from 'openid-client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { logInWithWallet, type RelyingParty, registerRelyingParty } from './flow-helpers.ts';

/** A person logged in at the app, the code exchanged with openid-client holding `dpop`'s key. */
async function signedIn(server: TestServer, rp: RelyingParty, dpop?: oidc.DPoPHandle, scope = 'openid') {
  const login = await logInWithWallet(server, rp, privateKeyToAccount(generatePrivateKey()), { scope });
  return oidc.authorizationCodeGrant(
    rp.config,
    login.redirectTo,
    { pkceCodeVerifier: login.verifier, expectedNonce: login.nonce, expectedState: login.state },
    undefined,
    dpop ? { DPoP: dpop } : {},
  );
}

const newHandle = async (rp: RelyingParty) =>
  oidc.getDPoPHandle(rp.config, await oidc.randomDPoPKeyPair('ES256'));

/** A proof made by hand, for the misuses openid-client would never send. */
async function handMadeProof(
  key: { privateKey: CryptoKey; jwk: JWK },
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
) {
  return new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk, ...header })
    .sign(key.privateKey);
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

for (const kind of DATABASE_KINDS) {
  describe(`DPoP (RFC 9449) with openid-client, on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    let userinfoUrl: string;
    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server, undefined, { grantTypes: ['refresh_token'] });
      userinfoUrl = `${server.url}/v2/openidc/user`;
    });
    after(() => server.close());

    /** The current server nonce, as a use_dpop_nonce answer hands it out. */
    async function serverNonce(token: string, key: { privateKey: CryptoKey; jwk: JWK }) {
      const proof = await handMadeProof(key, { htm: 'GET', htu: userinfoUrl, ath: ath(token) });
      const response = await fetch(userinfoUrl, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate')!, /^DPoP error="use_dpop_nonce"/);
      return response.headers.get('dpop-nonce')!;
    }

    /** A DPoP-bound token and its key, exported so hand-made proofs can use it. */
    async function boundToken() {
      const pair = await generateKeyPair('ES256', { extractable: true });
      const jwk = await exportJWK(pair.publicKey);
      const handle = oidc.getDPoPHandle(rp.config, pair);
      const tokens = await signedIn(server, rp, handle);
      const key = { privateKey: pair.privateKey, jwk };
      return { tokens, handle, key, nonce: await serverNonce(tokens.access_token, key) };
    }

    const userinfo = (token: string, proof: string, scheme = 'DPoP') =>
      fetch(userinfoUrl, { headers: { authorization: `${scheme} ${token}`, dpop: proof } });

    test('discovery lists the DPoP algorithms', () => {
      assert.deepEqual(rp.config.serverMetadata().dpop_signing_alg_values_supported, [
        'ES256',
        'ES384',
        'ES512',
        'EdDSA',
        'Ed25519',
        'PS256',
      ]);
    });

    test('a DPoP code exchange gives a DPoP token bound to the key; userinfo and the credential list take it with proofs', async () => {
      const handle = await newHandle(rp);
      const tokens = await signedIn(server, rp, handle);
      assert.equal(tokens.token_type.toLowerCase(), 'dpop');
      const cnf = decodeJwt(tokens.access_token)['cnf'] as { jkt: string };
      assert.match(cnf.jkt, /^[\w-]{43}$/);
      const sub = tokens.claims()!.sub;
      // openid-client learns the nonce from the use_dpop_nonce answer and retries by itself.
      assert.equal(
        (await oidc.fetchUserInfo(rp.config, tokens.access_token, sub, { DPoP: handle })).sub,
        sub,
      );
      const list = await oidc.fetchProtectedResource(
        rp.config,
        tokens.access_token,
        new URL(`${server.url}/v1/openidc/credentials`),
        'GET',
        undefined,
        undefined,
        { DPoP: handle },
      );
      assert.equal(list.status, 200);
      assert.ok(list.headers.get('dpop-nonce'), 'every DPoP answer carries the current nonce');
    });

    test('keys of every listed algorithm bind tokens and prove possession, each to its own thumbprint', async () => {
      for (const alg of ['ES384', 'ES512', 'EdDSA', 'PS256']) {
        const pair = await oidc.randomDPoPKeyPair(alg);
        const handle = oidc.getDPoPHandle(rp.config, pair);
        const tokens = await signedIn(server, rp, handle);
        const cnf = decodeJwt(tokens.access_token)['cnf'] as { jkt: string };
        assert.equal(cnf.jkt, await calculateJwkThumbprint(await exportJWK(pair.publicKey)), alg);
        const sub = tokens.claims()!.sub;
        assert.equal(
          (await oidc.fetchUserInfo(rp.config, tokens.access_token, sub, { DPoP: handle })).sub,
          sub,
        );
        // The same token with another key's proof of the same algorithm is refused.
        const other = oidc.getDPoPHandle(rp.config, await oidc.randomDPoPKeyPair(alg));
        await assert.rejects(
          oidc.fetchUserInfo(rp.config, tokens.access_token, sub, { DPoP: other }),
          (error: oidc.WWWAuthenticateChallengeError) =>
            error.cause[0]?.scheme === 'dpop' && error.cause[0].parameters.error === 'invalid_dpop_proof',
          alg,
        );
      }
    });

    test('a DPoP-bound token sent as a Bearer token is refused with a DPoP challenge', async () => {
      const { tokens } = await boundToken();
      const response = await fetch(userinfoUrl, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate')!, /^DPoP error="invalid_token"/);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_token');
    });

    test('a proof with the right nonce works; wrong ath, replayed jti, stale iat, another URL or method do not', async () => {
      const { tokens, key, nonce } = await boundToken();
      const good = { htm: 'GET', htu: userinfoUrl, ath: ath(tokens.access_token), nonce };
      const proof = await handMadeProof(key, good);
      assert.equal((await userinfo(tokens.access_token, proof)).status, 200);

      const refusals: Array<[string, string]> = [
        ['replayed jti', proof],
        ['wrong ath', await handMadeProof(key, { ...good, ath: ath('another token') })],
        ['no ath', await handMadeProof(key, { ...good, ath: undefined })],
        ['stale iat', await handMadeProof(key, { ...good, iat: Math.floor(Date.now() / 1000) - 120 })],
        ['future iat', await handMadeProof(key, { ...good, iat: Math.floor(Date.now() / 1000) + 120 })],
        ['another URL', await handMadeProof(key, { ...good, htu: `${server.url}/v1/openidc/credentials` })],
        ['another method', await handMadeProof(key, { ...good, htm: 'POST' })],
      ];
      const stranger = await generateKeyPair('ES256', { extractable: true });
      const strangerKey = { privateKey: stranger.privateKey, jwk: await exportJWK(stranger.publicKey) };
      refusals.push(['another key', await handMadeProof(strangerKey, good)]);
      refusals.push([
        'private key in the header',
        await handMadeProof(key, good, { jwk: await exportJWK(stranger.privateKey) }),
      ]);
      refusals.push(['wrong typ', await handMadeProof(key, good, { typ: 'JWT' })]);
      refusals.push(['two proofs', `${proof}, ${proof}`]);
      refusals.push(['not a JWS', 'not.a.proof!']);
      for (const [what, bad] of refusals) {
        const response = await userinfo(tokens.access_token, bad);
        assert.equal(response.status, 401, what);
        assert.match(response.headers.get('www-authenticate')!, /^DPoP error="invalid_dpop_proof"/, what);
        assert.equal(((await response.json()) as { error: string }).error, 'invalid_dpop_proof', what);
      }
      // The query string is not part of htu.
      const withQuery = await fetch(`${userinfoUrl}?x=1`, {
        headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await handMadeProof(key, good) },
      });
      assert.equal(withQuery.status, 200);
    });

    test('a proof without the server nonce, or with a made-up one, is answered use_dpop_nonce', async () => {
      const { tokens, key } = await boundToken();
      const base = { htm: 'GET', htu: userinfoUrl, ath: ath(tokens.access_token) };
      for (const nonce of [undefined, 'made-up-nonce']) {
        const response = await userinfo(tokens.access_token, await handMadeProof(key, { ...base, nonce }));
        assert.equal(response.status, 401);
        assert.match(response.headers.get('www-authenticate')!, /error="use_dpop_nonce"/);
        assert.ok(response.headers.get('dpop-nonce'));
      }
    });

    test('a Bearer token sent with the DPoP scheme is refused', async () => {
      const tokens = await signedIn(server, rp);
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      const response = await fetch(userinfoUrl, {
        headers: { authorization: `DPoP ${tokens.access_token}` },
      });
      assert.equal(response.status, 401);
    });

    test('a client registered --dpop-bound must send a proof at the token endpoint', async () => {
      const bound = await registerRelyingParty(server, undefined, { dpopBound: true });
      await assert.rejects(signedIn(server, bound), (error: oidc.ResponseBodyError) => {
        assert.equal(error.error, 'invalid_dpop_proof');
        return true;
      });
      const tokens = await signedIn(server, bound, await newHandle(bound));
      assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    });

    test("a confidential client's refresh binds each new access token to the proof sent with it", async () => {
      const handle = await newHandle(rp);
      const first = await signedIn(server, rp, handle, 'openid offline_access');
      const refreshed = await oidc.refreshTokenGrant(rp.config, first.refresh_token!, {}, { DPoP: handle });
      assert.equal(refreshed.token_type.toLowerCase(), 'dpop');
      const sub = first.claims()!.sub;
      assert.equal(
        (await oidc.fetchUserInfo(rp.config, refreshed.access_token, sub, { DPoP: handle })).sub,
        sub,
      );
    });

    test("a public client's refresh token is bound to its DPoP key", async () => {
      const app = await registerRelyingParty(server, undefined, {
        public: true,
        grantTypes: ['refresh_token'],
      });
      const handle = await newHandle(app);
      const first = await signedIn(server, app, handle, 'openid offline_access');
      const wrong = await newHandle(app);
      await assert.rejects(
        oidc.refreshTokenGrant(app.config, first.refresh_token!, {}, { DPoP: wrong }),
        (error: oidc.ResponseBodyError) => error.error === 'invalid_grant',
      );
      await assert.rejects(
        oidc.refreshTokenGrant(app.config, first.refresh_token!),
        (error: oidc.ResponseBodyError) => error.error === 'invalid_grant',
      );
      // Refused attempts spent nothing: the key's holder refreshes.
      const refreshed = await oidc.refreshTokenGrant(app.config, first.refresh_token!, {}, { DPoP: handle });
      assert.equal(refreshed.token_type.toLowerCase(), 'dpop');
    });

    test('bad proofs at the token endpoint are 400 invalid_dpop_proof and spend no code', async () => {
      const login = await logInWithWallet(server, rp, privateKeyToAccount(generatePrivateKey()));
      const pair = await generateKeyPair('ES256', { extractable: true });
      const key = { privateKey: pair.privateKey, jwk: await exportJWK(pair.publicKey) };
      const body = new URLSearchParams({
        grant_type: 'authorization_code',
        code: login.redirectTo.searchParams.get('code')!,
        redirect_uri: 'https://rp.example/callback',
        code_verifier: login.verifier,
        client_id: String(rp.clientId),
        client_secret: rp.clientSecret,
      }).toString();
      const post = async (proof: string) =>
        server.request('POST', '/v2/openidc/token', {
          headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
          body,
        });
      const tokenUrl = `${server.url}/v2/openidc/token`;
      const noNonce = await post(await handMadeProof(key, { htm: 'POST', htu: tokenUrl }));
      assert.equal(noNonce.status, 400);
      assert.equal((noNonce.body as { error: string }).error, 'use_dpop_nonce');
      const nonce = noNonce.headers.get('dpop-nonce')!;
      const wrongUrl = await post(await handMadeProof(key, { htm: 'POST', htu: userinfoUrl, nonce }));
      assert.equal((wrongUrl.body as { error: string }).error, 'invalid_dpop_proof');
      const hs = await post(
        `${Buffer.from('{"typ":"dpop+jwt","alg":"HS256"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.sig`,
      );
      assert.equal((hs.body as { error: string }).error, 'invalid_dpop_proof');
      const good = await post(await handMadeProof(key, { htm: 'POST', htu: tokenUrl, nonce }));
      assert.equal(good.status, 200);
      assert.equal((good.body as { token_type: string }).token_type, 'DPoP');
    });
  });
}
