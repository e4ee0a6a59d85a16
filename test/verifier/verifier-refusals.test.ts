import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import type { TestResponse } from '../helpers/server.ts';
import { answer, resolveRequest } from './test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * Issue #30: every refusal of the verifier is a 4xx with the project's error body and its stable
 * code, never a 500; a refused answer leaves its request open. The fuzz suite
 * (test/reliability/hostile-input.test.ts) searches at random; this file names each case.
 */
for (const kind of DATABASE_KINDS) {
  describe(`verifier refusals, on ${kind}`, () => {
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

    const query = sdJwtQuery(PID_VCT, [['given_name']]);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const api = (token = world.token) => ({ 'x-api-token': token });

    function refused(response: TestResponse, status: number, code: string, path?: string) {
      const where = `${status} ${code} ${path ?? ''}: ${response.status} ${response.text.slice(0, 300)}`;
      assert.equal(response.status, status, where);
      assert.equal(response.body.error, code, where);
      assert.equal(typeof response.body.error_description, 'string', where);
      if (path) {
        assert.ok(
          response.body.details?.some((detail: { path: string }) => detail.path === path),
          where,
        );
      }
    }

    async function open(body: Record<string, unknown> = {}) {
      const created = await world.createRequest({ dcql_query: query, ...body });
      assert.equal(created.status, 201, created.text);
      return created.body.data as {
        id: string;
        authorization_request?: string;
        dc_api_request?: unknown;
      };
    }
    const statusOf = async (id: string) => (await world.readResult(id)).body.data.status as string;

    test('ids in paths: malformed ones (a NUL among them) are 400, unknown or foreign ones 404', async () => {
      const { id } = await open();
      const probes = (requestId: string, token = world.token) =>
        [
          ['GET', `/v1/verifier/requests/${requestId}`, api(token), undefined],
          [
            'POST',
            `/v1/verifier/requests/${requestId}/dc-api-response`,
            api(token),
            { origin: 'https://shop.example', data: {} },
          ],
          ['GET', `/v1/verifier/requests/${requestId}/request-object`, {}, undefined],
          ['POST', `/v1/verifier/requests/${requestId}/request-object`, form, ''],
          ['POST', `/v1/verifier/requests/${requestId}/response`, form, 'error=access_denied'],
          ['GET', `/verify/${requestId}`, { accept: 'application/json' }, undefined],
        ] as const;
      for (const malformed of ['%00', 'a%00b', 'a%20b', '%E2%80%AE', 'x'.repeat(65)]) {
        for (const [method, path, headers, body] of probes(malformed)) {
          refused(
            await world.server.request(method, path, { headers, body }),
            400,
            'invalid_request',
            '/path/id',
          );
        }
      }
      for (const [method, path, headers, body] of probes('unknownRequestId')) {
        refused(await world.server.request(method, path, { headers, body }), 404, 'not_found');
      }
      const foreign = await world.server.createMaster('Foreign');
      for (const [method, path, headers, body] of probes(id, foreign.token).slice(0, 2)) {
        refused(await world.server.request(method, path, { headers, body }), 404, 'not_found');
      }
      const page = await world.server.request('GET', '/verify/unknownRequestId', {
        headers: { accept: 'text/html' },
      });
      assert.equal(page.status, 404);
      assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      assert.equal(await statusOf(id), 'created');
    });

    test('the request object: none for dc_api requests; wallet_metadata and wallet_nonce are checked', async () => {
      const dcApi = await open({ response_mode: 'dc_api.jwt', expected_origins: ['https://shop.example'] });
      for (const method of ['GET', 'POST'] as const) {
        refused(
          await world.server.request(method, `/v1/verifier/requests/${dcApi.id}/request-object`, {
            headers: form,
            ...(method === 'POST' ? { body: '' } : {}),
          }),
          404,
          'not_found',
        );
      }
      const { id } = await open();
      for (const [body, path] of [
        ['wallet_metadata=not-json', undefined],
        ['wallet_metadata=%5B%5D', undefined],
        ['wallet_metadata=null', undefined],
        ['wallet_nonce=', '/body/wallet_nonce'],
        ['wallet_nonce=a%00b', '/body/wallet_nonce'],
        ['wallet_nonce=line%0Abreak', '/body/wallet_nonce'],
        ['wallet_nonce=a&wallet_nonce=b', undefined],
      ] as const) {
        refused(
          await world.server.request('POST', `/v1/verifier/requests/${id}/request-object`, {
            headers: form,
            body,
          }),
          400,
          'invalid_request',
          path,
        );
      }
      assert.equal(await statusOf(id), 'created', 'a refused fetch retrieves nothing');
    });

    // Found by the fuzz suite: query ids are any [A-Za-z0-9_-]+, and one that names a member of
    // Object.prototype made every answer to its request a 500 (the results were kept in plain objects).
    test('a query named constructor, __proto__ or toString is answered and verified like any other', async () => {
      for (const id of ['constructor', '__proto__', 'toString']) {
        const created = await open({ dcql_query: sdJwtQuery(PID_VCT, [['given_name']], id) });
        const request = await resolveRequest(created.authorization_request!);
        const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
          aud: request.clientId,
          nonce: request.payload.nonce,
        });
        const answered = await answer(request, { [id]: [presentation] });
        assert.equal(answered.status, 200, `${id}: ${JSON.stringify(answered.body)}`);
        const result = (await world.readResult(created.id)).body.data;
        assert.equal(result.status, 'verified', `${id}: ${JSON.stringify(result)}`);
        assert.ok(Object.hasOwn(result.credentials, id), id);
        assert.equal(result.credentials[id][0].claims.given_name, 'Ada', id);
      }
    });
  });
}
