import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createApiToken } from '../../src/clients/client-admin.ts';
import { logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential } from '../credentials/stock-issuer.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';

/**
 * A person's acts on their data leave audit events (issue #42): deleting a credential
 * (`credential.delete`, the person) and erasing an account (`user.erase`, whoever erased it).
 * Ids only; a refused deletion or erasure records nothing.
 */
for (const kind of DATABASE_KINDS) {
  describe(`wallet audit events (${kind})`, () => {
    let server: TestServer;

    const eventsOf = (type: string) =>
      server.database.db.selectFrom('audit_events').selectAll().where('event_type', '=', type).execute();
    const count = async () =>
      Number(
        (
          await server.database.db
            .selectFrom('audit_events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    before(async () => {
      server = await startTestServer(kind);
      await registerPersonContext(server);
    });
    after(() => server.close());

    test('a credential deleted by its holder, then the account erased by the tenant, are recorded', async () => {
      const rp = await registerRelyingParty(server);
      const token = (await createApiToken(server.database.db, rp.clientId)).api_token;
      const alice = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      const { tenant_id: tenant } = await server.database.db
        .selectFrom('users')
        .select('tenant_id')
        .where('user_id', '=', alice.userId)
        .executeTakeFirstOrThrow();
      const issuer = await createStockIssuer();
      const vc = await issuer.issue(
        personCredential(issuer.did, alice.did, { first_name: 'Alicia', last_name: 'X' }),
      );
      const stored = await server.request('POST', '/v1/vc/issuer/store', {
        headers: { 'x-api-token': token },
        body: { vc },
      });
      assert.equal(stored.status, 201, stored.text);
      const path = `/v1/openidc/credentials/${encodeURIComponent(vc['id'] as string)}`;
      const deleted = await server.request('DELETE', path, { headers: alice.bearer });
      assert.ok(deleted.status < 300, deleted.text);
      const before = await count();
      assert.equal((await server.request('DELETE', path, { headers: alice.bearer })).status, 404);
      assert.equal(await count(), before, 'a refused deletion records nothing');
      const [deletion] = await eventsOf('credential.delete');
      assert.deepEqual(
        [deletion?.actor, deletion?.client_id, JSON.parse(deletion!.targets)],
        [`person:${alice.userId}`, tenant, { credential_id: vc['id'], user_id: alice.userId }],
      );
      assert.ok(!deletion!.targets.includes('Alicia'));

      // Another tenant cannot erase the account: 404, nothing recorded.
      const other = await server.createMaster('Other tenant');
      const foreign = await server.request('DELETE', `/v1/user/${alice.userId}`, {
        headers: { 'x-api-token': other.token },
      });
      assert.equal(foreign.status, 404);
      assert.equal(await count(), before);
      const erased = await server.request('DELETE', `/v1/user/${alice.userId}`, {
        headers: { 'x-api-token': token },
      });
      assert.equal(erased.status, 204, erased.text);
      const [erasure] = await eventsOf('user.erase');
      assert.deepEqual(
        [erasure?.actor, erasure?.client_id, JSON.parse(erasure!.targets)],
        [`client:${rp.clientId}`, tenant, { user_id: alice.userId }],
      );
      assert.equal((await eventsOf('user.erase')).length, 1);
    });
  });
}
