import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  codeFromOutbox,
  interactionView,
  logInWithWallet,
  postInteraction,
  type RelyingParty,
  registerRelyingParty,
  signSiwe,
  startLogin,
} from '../oidc/flow-helpers.ts';

for (const kind of DATABASE_KINDS) {
  describe(`audited log-ins on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    const events = () =>
      server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', '=', 'login')
        .orderBy('id')
        .execute();

    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server);
    });
    after(() => server.close());

    test('a wallet log-in is a success event of the person, in the client’s tenant', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      await logInWithWallet(server, rp, account);
      const [event] = await events();
      assert.ok(event);
      assert.equal(event.client_id, rp.clientId);
      assert.match(event.actor, /^person:\d+$/);
      assert.deepEqual(JSON.parse(event.targets), {
        user_id: Number(event.actor.slice(7)),
        method: 'wallet',
      });
      assert.equal(event.outcome, 'success');
      assert.ok(!JSON.stringify(event).toLowerCase().includes(account.address.toLowerCase()));
    });

    test('a refused log-in (forged signature, wrong code) is a failure event with a reason, naming nobody', async () => {
      const before = (await events()).length;
      const started = await startLogin(server, rp);
      const view = await interactionView(server, started.interactionPath);
      const signed = await signSiwe(privateKeyToAccount(generatePrivateKey()), view.body.siwe);
      const forged = await postInteraction(server, started.interactionPath, 'login/wallet', {
        ...signed,
        signature: `${signed.signature.slice(0, -4)}0000`,
      });
      assert.equal(forged.status >= 400 && forged.status < 500, true);

      const email = 'ada@example.org';
      const other = await startLogin(server, rp);
      assert.equal(
        (await postInteraction(server, other.interactionPath, 'login/email', { email })).status,
        202,
      );
      const code = await codeFromOutbox(server, email);
      const wrong = code === '000000' ? '111111' : '000000';
      const refused = await postInteraction(server, other.interactionPath, 'login/email/verify', {
        code: wrong,
      });
      assert.equal(refused.status, 400);

      const failures = (await events()).slice(before);
      assert.deepEqual(
        failures.map((event) => [event.client_id, event.actor, event.outcome, event.reason, event.targets]),
        [
          [rp.clientId, 'person:unknown', 'failure', 'bad_signature', '{"method":"wallet"}'],
          [rp.clientId, 'person:unknown', 'failure', 'code_wrong', '{"method":"email"}'],
        ],
      );
      assert.ok(!JSON.stringify(await events()).includes('example.org'));
    });
  });
}
