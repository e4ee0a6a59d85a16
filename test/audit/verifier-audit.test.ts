// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer, resolveRequest } from '../verifier/test-wallet.ts';
import {
  presentSdJwt,
  sdJwtQuery,
  startVerifierWorld,
  type VerifierWorld,
} from '../verifier/verifier-helpers.ts';

/**
 * The verifier's acts leave audit events (issue #42): a request created by the tenant, and each
 * answer taken from a wallet — verified (success) or not (failure, with the first failing check,
 * `wallet_error` or `declined`). A refused answer (a replay, a wrong state) records nothing.
 */
for (const kind of DATABASE_KINDS) {
  describe(`verifier audit events (${kind})`, () => {
    let world: VerifierWorld;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let credential: string;

    const eventsOf = async (requestId: string) =>
      (
        await world.server.database.db
          .selectFrom('audit_events')
          .selectAll()
          .where('event_type', 'in', ['verifier.request_create', 'verifier.response'])
          .orderBy('id')
          .execute()
      ).filter((e) => JSON.parse(e.targets).request_id === requestId);

    const open = async (body: Record<string, unknown> = {}) => {
      const created = await world.createRequest({
        dcql_query: sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]),
        ...body,
      });
      assert.equal(created.status, 201, created.text);
      return created.body.data as { id: string; authorization_request: string };
    };

    before(async () => {
      world = await startVerifierWorld(kind);
      holder = await generateKeyPair('ES256', { extractable: true });
      credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
    });
    after(() => world.close());

    test('a request and its verified answer are recorded; a replayed answer is not', async () => {
      const created = await open();
      const request = await resolveRequest(created.authorization_request);
      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      assert.equal((await answer(request, { pid: [presentation] })).status, 200);
      assert.equal((await answer(request, { pid: [presentation] })).status, 400);
      const events = await eventsOf(created.id);
      assert.deepEqual(
        events.map((e) => [e.event_type, e.actor, e.client_id, e.outcome, e.reason]),
        [
          ['verifier.request_create', `client:${world.clientId}`, world.clientId, 'success', null],
          ['verifier.response', 'wallet', world.clientId, 'success', null],
        ],
      );
      assert.ok(!events.some((e) => e.targets.includes('Ada')), 'never the claims');
    });

    test('a failed verification is recorded with the first failing check; a declined answer as declined', async () => {
      const created = await open();
      const request = await resolveRequest(created.authorization_request);
      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: 'another-nonce',
      });
      assert.equal((await answer(request, { pid: [presentation] })).status, 200);
      const declined = await open({ response_mode: 'direct_post' });
      const state = (await resolveRequest(declined.authorization_request)).payload.state as string;
      const respond = (body: string) =>
        world.server.request('POST', `/v1/verifier/requests/${declined.id}/response`, {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
      // A wrong state is refused: nothing is recorded for it.
      assert.equal((await respond('error=access_denied&state=wrong')).status, 400);
      assert.equal((await respond(`error=access_denied&state=${state}`)).status, 200);
      assert.equal((await respond(`error=invalid_request&state=${state}`)).status, 200);
      const failed = (await eventsOf(created.id)).find((e) => e.event_type === 'verifier.response');
      assert.deepEqual([failed?.outcome, failed?.reason, failed?.actor], ['failure', 'nonce', 'wallet']);
      const answers = (await eventsOf(declined.id)).filter((e) => e.event_type === 'verifier.response');
      assert.deepEqual(
        answers.map((e) => [e.outcome, e.reason]),
        [
          ['failure', 'declined'],
          ['failure', 'wallet_error'],
        ],
      );
    });

    test('a refused request creation records nothing; another tenant sees none of these events', async () => {
      const before = await world.server.database.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const refused = await world.createRequest({ dcql_query: { credentials: [] } });
      assert.equal(refused.status, 400);
      const after = await world.server.database.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(after.n), Number(before.n));
      const other = await world.addTenant('Other shop', false);
      const page = await world.server.request('GET', '/v1/audit?type=verifier.response', {
        headers: { 'x-api-token': other.token },
      });
      assert.equal(page.status, 200);
      assert.deepEqual(page.body.data, []);
    });
  });
}
