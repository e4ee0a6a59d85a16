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
    let otherToken: string;

    before(async () => {
      world = await startVerifierWorld(kind);
      holder = await generateKeyPair('ES256', { extractable: true });
      credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
      otherToken = (await world.server.createMaster('Not a verifier')).token;
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
    const respond = (id: string, body: string) =>
      world.server.request('POST', `/v1/verifier/requests/${id}/response`, { headers: form, body });

    test('creating a request: each refusal names the field at fault', async () => {
      refused(
        await world.server.request('POST', '/v1/verifier/requests', { body: { dcql_query: query } }),
        401,
        'unauthorized',
      );
      refused(
        await world.server.request('POST', '/v1/verifier/requests', {
          headers: api(otherToken),
          body: { dcql_query: query },
        }),
        403,
        'forbidden',
      );
      const mdocQuery = {
        credentials: [
          ...query.credentials,
          { id: 'mdl', format: 'mso_mdoc', meta: { doctype_value: 'org.iso.18013.5.1.mDL' } },
        ],
      };
      const cases: [Record<string, unknown>, string][] = [
        [{}, '/body/dcql_query'],
        [{ dcql_query: { credentials: [] } }, '/body/dcql_query'],
        [{ dcql_query: { credentials: [{ id: 'a b', format: 'dc+sd-jwt', meta: {} }] } }, '/body/dcql_query'],
        [{ dcql_query: query, extra: 1 }, '/body/extra'],
        [{ dcql_query: query, response_mode: 'fragment' }, '/body/response_mode'],
        [{ dcql_query: query, expires_in: 0 }, '/body/expires_in'],
        [
          {
            dcql_query: query,
            transaction_data: [{ type: 'urn:example:payment', credential_ids: ['nope'] }],
          },
          '/body/transaction_data/0/credential_ids',
        ],
        [
          {
            dcql_query: mdocQuery,
            transaction_data: [{ type: 'urn:example:payment', credential_ids: ['mdl'] }],
          },
          '/body/transaction_data/0/credential_ids',
        ],
        [{ dcql_query: query, trusted_issuers: ['not a certificate'] }, '/body/trusted_issuers/0'],
        [
          {
            dcql_query: query,
            trusted_issuers: ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'],
          },
          '/body/trusted_issuers/0',
        ],
        [{ dcql_query: query, response_mode: 'dc_api' }, '/body/expected_origins'],
        [
          { dcql_query: query, response_mode: 'direct_post', expected_origins: ['https://shop.example'] },
          '/body/expected_origins',
        ],
        [
          { dcql_query: query, response_mode: 'dc_api', expected_origins: ['https://shop.example/page'] },
          '/body/expected_origins/0',
        ],
        [
          {
            dcql_query: query,
            response_mode: 'dc_api.jwt',
            expected_origins: ['https://shop.example'],
            redirect_uri: 'https://shop.example/done',
          },
          '/body/redirect_uri',
        ],
        [{ dcql_query: query, redirect_uri: 'http://shop.example/done' }, '/body/redirect_uri'],
        [{ dcql_query: query, redirect_uri: 'not a url' }, '/body/redirect_uri'],
        [{ dcql_query: query, callback_url: 'https://user:secret@shop.example/cb' }, '/body/callback_url'],
      ];
      for (const [body, path] of cases) {
        refused(await world.createRequest(body), 400, 'invalid_request', path);
      }
      refused(
        await world.server.request('POST', '/v1/verifier/requests', {
          headers: { ...api(), 'content-type': 'application/json' },
          body: `{"dcql_query":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`,
        }),
        400,
        'invalid_request',
      );
      refused(
        await world.server.request('POST', '/v1/verifier/requests', {
          headers: { ...api(), 'content-type': 'text/plain' },
          body: 'dcql_query',
        }),
        415,
        'unsupported_media_type',
      );
    });

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

    test('the response: every refusal is a 400 and leaves the request open; an error answer leaves it open too', async () => {
      const plain = await open({ response_mode: 'direct_post' });
      const request = await resolveRequest(plain.authorization_request!);
      const state = request.payload.state as string;
      for (const body of [
        '',
        `state=${state}`,
        `vp_token=not-json&state=${state}`,
        `vp_token=%7B%7D&state=wrong`,
        `vp_token=%7B%7D`,
        `vp_token=%7B%7D&state=${state}&state=${state}`,
        `error=access_denied&state=wrong`,
      ]) {
        refused(await respond(plain.id, body), 400, 'invalid_request');
      }
      assert.equal(await statusOf(plain.id), 'retrieved');

      const sealed = await open();
      await resolveRequest(sealed.authorization_request!);
      for (const body of [
        `vp_token=%7B%7D&state=${state}`,
        'response=',
        'response=not-a-jwe',
        'response=eyJhbGciOiJFQ0RILUVTIiwiZW5jIjoiQTEyOEdDTSJ9..AAAA.AAAA.AAAA',
      ]) {
        refused(await respond(sealed.id, body), 400, 'invalid_request');
      }
      assert.equal(await statusOf(sealed.id), 'retrieved');

      assert.equal((await respond(plain.id, `error=access_denied&state=${state}`)).status, 200);
      // Not final (anyone who saw the QR code can send one): another answer is still taken.
      assert.equal((await respond(plain.id, `error=access_denied&state=${state}`)).status, 200);
      assert.equal(await statusOf(plain.id), 'declined');

      const brief = await open({ response_mode: 'direct_post', expires_in: 1 });
      const briefRequest = await resolveRequest(brief.authorization_request!);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      refused(
        await respond(brief.id, `error=access_denied&state=${briefRequest.payload.state}`),
        400,
        'invalid_request',
      );
      assert.equal(await statusOf(brief.id), 'expired');
    });

    test('DC API responses: wrong origin, wrong kind of request, another tenant, an error twice', async () => {
      const origin = 'https://shop.example';
      const post = (id: string, body: unknown, token = world.token) =>
        world.server.request('POST', `/v1/verifier/requests/${id}/dc-api-response`, {
          headers: api(token),
          body,
        });
      const dcApi = await open({ response_mode: 'dc_api', expected_origins: [origin] });
      refused(
        await post(dcApi.id, { origin: 'https://evil.example', data: { error: 'access_denied' } }),
        400,
        'invalid_request',
      );
      refused(await post(dcApi.id, { origin, data: {} }), 400, 'invalid_request');
      refused(await post(dcApi.id, { origin, data: { vp_token: 'not json' } }), 400, 'invalid_request');
      refused(await post(dcApi.id, { origin, data: [] }), 400, 'invalid_request', '/body/data');
      refused(await post(dcApi.id, { data: {} }), 400, 'invalid_request', '/body/origin');
      refused(
        await post(dcApi.id, { origin, data: { error: 'access_denied' } }, otherToken),
        404,
        'not_found',
      );
      assert.equal(await statusOf(dcApi.id), 'created');
      assert.equal((await post(dcApi.id, { origin, data: { error: 'access_denied' } })).status, 200);
      assert.equal((await post(dcApi.id, { origin, data: { error: 'access_denied' } })).status, 200);
      assert.equal(await statusOf(dcApi.id), 'declined');

      const sealed = await open({ response_mode: 'dc_api.jwt', expected_origins: [origin] });
      refused(await post(sealed.id, { origin, data: { vp_token: '{}' } }), 400, 'invalid_request');
      refused(await post(sealed.id, { origin, data: { response: 'x.y.z' } }), 400, 'invalid_request');
      assert.equal(await statusOf(sealed.id), 'created');

      const direct = await open();
      refused(await post(direct.id, { origin, data: { error: 'access_denied' } }), 404, 'not_found');
    });

    test('a same-device result is read with its response_code only', async () => {
      const { id, authorization_request } = await open({ redirect_uri: 'https://shop.example/done' });
      const request = await resolveRequest(authorization_request!);
      const answered = await answer(request, {}, { error: 'access_denied' });
      assert.equal(answered.status, 200);
      refused(await world.readResult(id), 400, 'invalid_request', '/querystring/response_code');
      refused(await world.readResult(id, '?response_code=wrong'), 403, 'forbidden');
      refused(await world.readResult(id, '?response_code='), 400, 'invalid_request');
      refused(await world.readResult(id, '?response_code=a&response_code=b'), 400, 'invalid_request');
      refused(await world.readResult(id, '?other=1'), 400, 'invalid_request');
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
