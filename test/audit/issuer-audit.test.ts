// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type InteropIssuer, startInteropIssuer } from '../issuer/test-wallet.ts';
import { minimalProfile } from '../users/helpers.ts';

/**
 * The issuer's acts leave audit events (issue #42): configurations, offers, issuances and status
 * changes, with the tenant and the actor, ids only; a refused act leaves nothing.
 */
const DEGREE = { given_name: 'Ada', degree: 'BSc Mathematics' };
const CONFIGURATION = {
  format: 'dc+sd-jwt',
  vct: 'https://example.edu/degree',
  claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
  status: true,
};

for (const kind of DATABASE_KINDS) {
  describe(`issuer audit events (${kind})`, () => {
    let world: InteropIssuer;

    const events = async (type: string) =>
      world.server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', '=', type)
        .orderBy('id')
        .execute();
    const count = async () =>
      Number(
        (
          await world.server.database.db
            .selectFrom('audit_events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    before(async () => {
      world = await startInteropIssuer(kind);
    });
    after(() => world.close());

    test('configuration put and delete are recorded with the tenant as actor', async () => {
      assert.equal((await world.api('PUT', '/v1/issuer/configurations/degree', CONFIGURATION)).status, 201);
      assert.equal((await world.api('PUT', '/v1/issuer/configurations/gone', CONFIGURATION)).status, 201);
      assert.equal((await world.api('DELETE', '/v1/issuer/configurations/gone')).status, 204);
      const puts = await events('issuer.configuration_put');
      assert.deepEqual(
        puts.map((e) => [e.actor, e.client_id, JSON.parse(e.targets).configuration_id]),
        [
          [`client:${world.clientId}`, world.clientId, 'degree'],
          [`client:${world.clientId}`, world.clientId, 'gone'],
        ],
      );
      const [deleted] = await events('issuer.configuration_delete');
      assert.deepEqual(JSON.parse(deleted!.targets), { configuration_id: 'gone' });
      assert.equal(deleted!.actor, `client:${world.clientId}`);
    });

    test('an offer, its issuance and a revocation are recorded; never the claims', async () => {
      const offer = await world.offer({ configuration_ids: ['degree'], claims: { degree: DEGREE } });
      const [created] = (await events('issuer.offer_create')).filter(
        (e) => JSON.parse(e.targets).offer_id === offer.id,
      );
      assert.equal(created?.actor, `client:${world.clientId}`);
      assert.equal(created?.client_id, world.clientId);
      await world.wallet.receive(offer.offer_link);
      const records = await world.api('GET', `/v1/issuer/credentials?offer=${offer.id}`);
      const credentialId = records.body.data[0].id as string;
      const [issued] = (await events('issuer.credential_issue')).filter(
        (e) => JSON.parse(e.targets).offer_id === offer.id,
      );
      // No account named by the offer: the actor is the wallet.
      assert.equal(issued?.actor, 'wallet');
      assert.equal(issued?.client_id, world.clientId);
      assert.deepEqual(JSON.parse(issued!.targets), {
        offer_id: offer.id,
        configuration_id: 'degree',
        credential_id: credentialId,
      });
      assert.ok(!issued!.targets.includes('Ada'));
      const revoked = await world.api(
        'POST',
        `/v1/issuer/credentials/${encodeURIComponent(credentialId)}/status`,
        {
          status: 'revoked',
        },
      );
      assert.equal(revoked.status, 200, revoked.text);
      const [change] = await events('issuer.status_change');
      assert.equal(change?.actor, `client:${world.clientId}`);
      assert.deepEqual(JSON.parse(change!.targets), {
        credential_id: credentialId,
        from: 'valid',
        to: 'revoked',
      });
    });

    test('an offer made for a person: its issuance names the person; erasing them cancels the rest', async () => {
      const user = await world.api('POST', '/v1/user/create', { profile: minimalProfile() });
      assert.equal(user.status, 201, user.text);
      const userId = user.body.data.user_id as number;
      const redeemed = await world.offer({
        configuration_ids: ['degree'],
        claims: { degree: DEGREE },
        user_id: userId,
      });
      await world.wallet.receive(redeemed.offer_link);
      const [issued] = (await events('issuer.credential_issue')).filter(
        (e) => JSON.parse(e.targets).offer_id === redeemed.id,
      );
      assert.equal(issued?.actor, `person:${userId}`);
      assert.equal(issued?.client_id, world.clientId);

      const pending = await world.offer({
        configuration_ids: ['degree'],
        claims: { degree: DEGREE },
        user_id: userId,
      });
      const erased = await world.api('DELETE', `/v1/user/${userId}`);
      assert.equal(erased.status, 204, erased.text);
      const cancelled = await events('issuer.offer_cancel');
      assert.deepEqual(
        cancelled.map((e) => [e.actor, e.client_id, JSON.parse(e.targets)]),
        [[`client:${world.clientId}`, world.clientId, { offer_id: pending.id }]],
        'only the unfinished offer is cancelled, by whoever erased the account',
      );
    });

    test('refused acts record nothing: unknown configuration, bad offer, final revocation, other tenant', async () => {
      const before = await count();
      assert.equal((await world.api('DELETE', '/v1/issuer/configurations/none')).status, 404);
      const badOffer = await world.api('POST', '/v1/issuer/offers', { configuration_ids: ['none'] });
      assert.equal(badOffer.status, 400);
      const bad = await world.api('PUT', '/v1/issuer/configurations/bad', { format: 'dc+sd-jwt' });
      assert.equal(bad.status, 400);
      const [change] = await events('issuer.status_change');
      const credentialId = JSON.parse(change!.targets).credential_id as string;
      const path = `/v1/issuer/credentials/${encodeURIComponent(credentialId)}/status`;
      assert.equal((await world.api('POST', path, { status: 'valid' })).status, 409);
      // Already revoked: a request that changes nothing records nothing.
      assert.equal((await world.api('POST', path, { status: 'revoked' })).status, 200);
      const other = await world.server.createMaster('Other tenant');
      const foreign = await world.server.request('POST', path, {
        headers: { 'x-api-token': other.token },
        body: { status: 'revoked' },
      });
      assert.equal(foreign.status, 403);
      assert.equal(await count(), before);
    });
  });
}
