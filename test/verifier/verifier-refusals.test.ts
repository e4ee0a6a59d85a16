import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
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
    async function open(body: Record<string, unknown> = {}) {
      const created = await world.createRequest({ dcql_query: query, ...body });
      assert.equal(created.status, 201, created.text);
      return created.body.data as {
        id: string;
        authorization_request?: string;
        dc_api_request?: unknown;
      };
    }

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
