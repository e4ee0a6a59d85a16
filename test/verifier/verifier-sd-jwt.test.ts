import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_CLAIMS, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer, encryptResponse, postForm, resolveRequest } from './test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * Coffer's verifier end to end with an SD-JWT VC: the tenant asks, a wallet that is not Coffer's
 * (@openid4vc/openid4vp reads the request, @sd-jwt and jose make and encrypt the answer) answers,
 * and the tenant reads verified claims — or a rejection naming the check that failed.
 */
for (const kind of DATABASE_KINDS) {
  describe(`verifier: dc+sd-jwt, on ${kind}`, () => {
    let world: VerifierWorld;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let credential: string;

    before(async () => {
      world = await startVerifierWorld(kind);
      holder = await generateKeyPair('ES256', { extractable: true });
      credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
    });
    after(() => world.close());

    async function requestFor(body: Record<string, unknown> = {}) {
      const created = await world.createRequest({
        dcql_query: sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]),
        ...body,
      });
      assert.equal(created.status, 201, created.text);
      return created.body.data;
    }

    test('a wallet fetches the signed request, presents, and the tenant reads verified claims', async () => {
      const created = await requestFor();
      assert.match(created.authorization_request, /^openid4vp:\/\/\?client_id=x509_san_dns%3A127\.0\.0\.1&/);
      assert.equal(created.haip_authorization_request, undefined, 'not a request HAIP shapes');
      const haipShaped = await requestFor({ client_id_prefix: 'x509_hash' });
      assert.equal(
        haipShaped.haip_authorization_request,
        haipShaped.authorization_request.replace('openid4vp://', 'haip://'),
      );
      assert.equal(created.status, 'created');
      const request = await resolveRequest(created.authorization_request, {
        walletNonce: 'wallet-nonce-123',
      });
      assert.equal(request.clientId, 'x509_san_dns:127.0.0.1');
      assert.equal(request.payload.response_mode, 'direct_post.jwt');
      assert.equal(request.payload.wallet_nonce, 'wallet-nonce-123');
      assert.ok(request.payload.nonce.length >= 22, 'the nonce carries at least 128 bits');
      assert.equal((await world.readResult(created.id)).body.data.status, 'retrieved');

      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      const answered = await answer(request, { pid: [presentation] });
      assert.equal(answered.status, 200, JSON.stringify(answered.body));

      const result = await world.readResult(created.id);
      assert.equal(result.status, 200);
      assert.equal(result.body.data.status, 'verified', JSON.stringify(result.body.data));
      const [entry] = result.body.data.credentials.pid;
      assert.equal(entry.format, 'dc+sd-jwt');
      assert.equal(entry.issuer.trusted, true);
      assert.equal(entry.claims.given_name, 'Ada');
      assert.equal(entry.claims.family_name, 'Lovelace');
      assert.equal(entry.claims.birthdate, undefined, 'only what was disclosed');
      assert.ok(entry.checks.every((check: { ok: boolean }) => check.ok));
      for (const name of ['issuer_signature', 'issuer_trusted', 'digests', 'audience', 'nonce', 'sd_hash']) {
        assert.ok(
          entry.checks.some((check: { name: string }) => check.name === name),
          name,
        );
      }
    });

    test('the response is taken once: a replay is refused and the result stays', async () => {
      const created = await requestFor();
      const request = await resolveRequest(created.authorization_request);
      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      assert.equal((await answer(request, { pid: [presentation] })).status, 200);
      const replay = await answer(request, { pid: [presentation] });
      assert.equal(replay.status, 400);
      assert.equal(replay.body.error, 'invalid_request');
      assert.equal((await world.readResult(created.id)).body.data.status, 'verified');
    });

    for (const [what, binding, check] of [
      ['a wrong nonce', { nonce: 'another-nonce' }, 'nonce'],
      ['a wrong aud', { aud: 'x509_hash:abc' }, 'audience'],
      ['a stale key binding JWT', { iat: Math.floor(Date.now() / 1000) - 3600 }, 'freshness'],
    ] as const) {
      test(`${what} is rejected with the ${check} check named, and no claim is handed on`, async () => {
        const created = await requestFor();
        const request = await resolveRequest(created.authorization_request);
        const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
          aud: request.clientId,
          nonce: request.payload.nonce,
          ...(binding as Record<string, unknown>),
        });
        assert.equal((await answer(request, { pid: [presentation] })).status, 200);
        const result = (await world.readResult(created.id)).body.data;
        assert.equal(result.status, 'rejected');
        assert.match(result.error.error_description, new RegExp(`pid: ${check}`));
        const [entry] = result.credentials.pid;
        assert.equal(entry.claims, undefined);
        assert.deepEqual(entry.checks.find((c: { ok: boolean }) => !c.ok).name, check);
      });
    }

    test('an SD-JWT VC whose trusted certificate does not name its iss is rejected at issuer_named', async () => {
      const forged = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
        claims: { ...PID_CLAIMS, iss: 'https://pid.gov.example' },
      });
      const created = await requestFor();
      const request = await resolveRequest(created.authorization_request);
      const presentation = await presentSdJwt(forged, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      assert.equal((await answer(request, { pid: [presentation] })).status, 200);
      const result = (await world.readResult(created.id)).body.data;
      assert.equal(result.status, 'rejected');
      const [entry] = result.credentials.pid;
      assert.equal(entry.checks.find((c: { ok: boolean }) => !c.ok).name, 'issuer_named');
      assert.equal(entry.claims, undefined);
    });

    test('a presentation that does not satisfy the query ends rejected, never stuck', async () => {
      const created = await requestFor();
      const request = await resolveRequest(created.authorization_request);
      const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      await answer(request, { pid: [presentation] });
      const result = (await world.readResult(created.id)).body.data;
      assert.equal(result.status, 'rejected');
      assert.match(result.error.error_description, /dcql/);
    });

    test("the wallet's access_denied declines the request", async () => {
      const created = await requestFor();
      const request = await resolveRequest(created.authorization_request);
      const declined = await postForm(request.payload.response_uri, {
        error: 'access_denied',
        state: request.payload.state,
      });
      assert.equal(declined.status, 200);
      const result = (await world.readResult(created.id)).body.data;
      assert.equal(result.status, 'declined');
      assert.equal(result.error.error, 'access_denied');
    });

    test('an answer encrypted to another key or with another state is refused and leaves the request open', async () => {
      const created = await requestFor();
      const request = await resolveRequest(created.authorization_request);
      const other = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
      const foreign = {
        ...request,
        payload: {
          ...request.payload,
          client_metadata: { jwks: { keys: [{ ...(await exportJWK(other.publicKey)), alg: 'ECDH-ES' }] } },
        },
      };
      const wrongKey = await postForm(request.payload.response_uri, {
        response: await encryptResponse(foreign, { vp_token: { pid: ['x'] }, state: request.payload.state }),
      });
      assert.equal(wrongKey.status, 400);
      const wrongState = await postForm(request.payload.response_uri, {
        response: await encryptResponse(request, { vp_token: { pid: ['x'] }, state: 'not-the-state' }),
      });
      assert.equal(wrongState.status, 400);
      assert.equal((await world.readResult(created.id)).body.data.status, 'retrieved');
    });

    test('same-device: the redirect carries a response_code, which reading the result then needs', async () => {
      const created = await requestFor({ redirect_uri: 'https://shop.example/done' });
      const request = await resolveRequest(created.authorization_request);
      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      const answered = await answer(request, { pid: [presentation] });
      const redirect = new URL(answered.body.redirect_uri);
      assert.equal(`${redirect.origin}${redirect.pathname}`, 'https://shop.example/done');
      const code = new URLSearchParams(redirect.hash.slice(1)).get('response_code')!;
      assert.ok(code.length >= 32);
      const without = await world.readResult(created.id);
      assert.equal(without.status, 400);
      const wrong = await world.readResult(created.id, '?response_code=wrong');
      assert.equal(wrong.status, 403);
      const right = await world.readResult(created.id, `?response_code=${encodeURIComponent(code)}`);
      assert.equal(right.body.data.status, 'verified');
    });

    test('another tenant cannot read the request; an unknown one is 404', async () => {
      const created = await requestFor();
      const other = await world.server.createMaster('Other');
      const foreign = await world.server.request('GET', `/v1/verifier/requests/${created.id}`, {
        headers: { 'x-api-token': other.token },
      });
      assert.equal(foreign.status, 404);
      assert.equal((await world.readResult('unknown-request-id')).status, 404);
    });
  });
}
