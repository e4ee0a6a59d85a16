import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import {
  codeFromOutbox,
  interactionView,
  logInWithWallet,
  postInteraction,
  registerRelyingParty,
  signUpByEmail,
} from '../oidc/flow-helpers.ts';
import { checkVpToken } from './presentation-check.ts';
import type { Transaction, Verifier } from './verifier.ts';
import {
  approve,
  consentView,
  issueTo,
  logInWithSiweInConsent,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/** Who the person is, inside the consent (DESIGN.md, Hosted wallet): e-mail, SIWE, or a session. */

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet log-in inside the consent, on ${kind}`, () => {
    let verifier: Verifier;
    let world: WalletWorld;

    before(async () => {
      world = await startWalletWorld(kind);
      verifier = world.verifier;
    });
    // Optional chaining: when `before` failed, there may be nothing to close.
    after(async () => {
      await world?.close();
    });

    const presentedBy = async (
      transaction: Transaction,
      path: string,
      holder: string,
      selection?: string,
    ) => {
      const received = await approve(
        world.server,
        path,
        transaction,
        selection ? { person: selection } : undefined,
      );
      const [checked] = await checkVpToken(received.vpToken, {
        nonce: transaction.nonce,
        clientId: transaction.clientId,
        claims: { person: [['first_name']] },
      });
      assert.equal(checked!.holder, holder);
      return checked!;
    };

    test('with an e-mail code', async () => {
      const email = `ada-${randomBytes(4).toString('hex')}@example.org`;
      const did = await signUpByEmail(world.server, world.rp, email);
      const credential = await issueTo(world, did);

      const transaction = await verifier.createRequest();
      const path = await startConsent(world.server, transaction.query);
      // The outbox names messages by the millisecond; the consent's code must be the newest.
      await sleep(5);
      assert.equal((await postInteraction(world.server, path, 'login/email', { email })).status, 202);
      const code = await codeFromOutbox(world.server, email);
      const wrong = await postInteraction(world.server, path, 'login/email/verify', {
        code: code === '000000' ? '111111' : '000000',
      });
      assert.equal(wrong.status, 400);
      assert.equal((await consentView(world.server, path)).requests[0].candidates.length, 0);

      const verified = await postInteraction(world.server, path, 'login/email/verify', { code });
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
      assert.deepEqual(verified.body, { next: 'consent' });
      assert.match(verified.cookie ?? '', /HttpOnly/i, 'a session starts');
      const consent = await consentView(world.server, path);
      assert.deepEqual(
        consent.requests[0].candidates.map((c: { credential_id: string }) => c.credential_id),
        [credential['id']],
      );
      const checked = await presentedBy(transaction, path, did);
      assert.equal(checked.credentialId, credential['id']);
    });

    test('with Sign-In with Ethereum', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const user = await logInUser(world.server, world.rp, account);
      await issueTo(world, user.did);
      const transaction = await verifier.createRequest();
      const path = await startConsent(world.server, transaction.query);
      const before = await interactionView(world.server, path);
      assert.equal(before.body.logged_in, false);
      assert.equal(before.body.consent.satisfiable, false);

      const login = await logInWithSiweInConsent(world.server, path, account);
      assert.match(login.cookie ?? '', /HttpOnly/i, 'a session starts');
      assert.equal((await interactionView(world.server, path)).body.logged_in, true);
      await presentedBy(transaction, path, user.did);
    });

    test('an existing session from an OIDC log-in skips the log-in', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const user = await logInUser(world.server, world.rp, account);
      await issueTo(world, user.did);
      const { cookie } = await logInWithWallet(world.server, world.rp, account);

      const transaction = await verifier.createRequest();
      const path = await startConsent(world.server, transaction.query, cookie);
      const view = await interactionView(world.server, path);
      assert.equal(view.body.logged_in, true);
      assert.equal(view.body.consent.satisfiable, true);
      await presentedBy(transaction, path, user.did);

      const anonymous = await startConsent(world.server, (await verifier.createRequest()).query);
      assert.equal((await interactionView(world.server, anonymous)).body.logged_in, false);
    });

    test('credentials of two accounts with the same wallet in two tenants are both offered', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const otherTenant = await registerRelyingParty(world.server);
      const first = await logInUser(world.server, world.rp, account);
      const second = await logInUser(world.server, otherTenant, account);
      assert.notEqual(first.did, second.did, 'one account per tenant');
      const firstCredential = await issueTo(world, first.did);
      const secondCredential = await issueTo(world, second.did, { first_name: 'Augusta' });
      await issueTo(
        world,
        (await logInUser(world.server, world.rp, privateKeyToAccount(generatePrivateKey()))).did,
      );

      const transaction = await verifier.createRequest();
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, account);
      const consent = await consentView(world.server, path);
      assert.deepEqual(
        consent.requests[0].candidates.map((c: { credential_id: string }) => c.credential_id).sort(),
        [firstCredential['id'], secondCredential['id']].sort(),
      );
      const checked = await presentedBy(transaction, path, second.did, String(secondCredential['id']));
      assert.equal(checked.subject['first_name'], 'Augusta');
    });
  });
}
