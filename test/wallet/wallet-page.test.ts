import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { CREDENTIALS_SHOWN } from '../../src/wallet/wallet-service.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import {
  approve,
  issueTo,
  logInWithSiweInConsent,
  personWithCredential,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from '../oid4vp/wallet-helpers.ts';
import { interactionView, postInteraction, signSiwe } from '../oidc/flow-helpers.ts';
import { deleteFromPage, openWallet, pageToken, walletJson, walletLogin } from './wallet-helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

for (const kind of DATABASE_KINDS) {
  describe(`the person's wallet page, headless, on ${kind}`, () => {
    let world: WalletWorld;
    before(async () => {
      world = await startWalletWorld(kind);
    });
    after(async () => {
      await world?.close();
    });

    test('without a session the page sends the person to log in; its JSON answers 401', async () => {
      await walletLogin(world.server);
      const json = await fetch(`${world.server.url}/wallet`, { headers: { accept: 'application/json' } });
      assert.equal(json.status, 401);
      assert.equal(((await json.json()) as { error: string }).error, 'unauthorized');
      const stale = await fetch(`${world.server.url}/wallet`, {
        headers: { cookie: 'coffer_session=not-a-session' },
        redirect: 'manual',
      });
      assert.equal(stale.status, 303);
    });

    test('an identity without an account here gets no wallet and no session', async () => {
      const path = await walletLogin(world.server);
      const view = await interactionView(world.server, path);
      const stranger = privateKeyToAccount(generatePrivateKey());
      const login = await postInteraction(
        world.server,
        path,
        'login/wallet',
        await signSiwe(stranger, view.body.siwe),
      );
      assert.equal(login.status, 404);
      assert.match(login.body.error_description, /No account here/);
      assert.equal(login.cookie, null);
    });

    test('log-in, the credentials with their claims, issuer, validity and arrival in the history', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const cookie = await openWallet(world.server, ada.account);
      const wallet = await walletJson(world.server, cookie);
      assert.equal(wallet.credentials.length, 1);
      const [credential] = wallet.credentials;
      assert.equal(credential.id, ada.credentialId);
      assert.equal(credential.format, 'ldp_vc');
      assert.deepEqual(credential.types, ['PersonCredential']);
      assert.equal(credential.issuer.name, world.issuer.did);
      // Readable names beside the raw ones (issue #29): the type in words, the DID shortened.
      assert.equal(credential.typeName, 'Person credential');
      assert.equal(credential.issuer.identifier, world.issuer.did);
      assert.match(credential.issuer.label, /^did:key:\S{8}…\S{6}$/);
      assert.equal(credential.issuer.shortIdentifier, null, 'the label already is the shortened DID');
      assert.equal(credential.receivedFrom, 'Issuer');
      assert.equal(credential.validity, 'valid');
      assert.equal(credential.status, null, 'no status entry, no status');
      const claims = Object.fromEntries(credential.claims.map((c: Json) => [c.label, c.value]));
      assert.equal(claims['first_name'], 'Ada');
      assert.equal(claims['last_name'], 'Lovelace');
      assert.equal(claims['proof'], undefined);
      assert.deepEqual(
        wallet.history.map((e: Json) => [e.kind, e.credential.id, e.from?.name]),
        [['arrival', ada.credentialId, 'Issuer']],
      );
      const html = await (await fetch(`${world.server.url}/wallet`, { headers: { cookie } })).text();
      assert.match(html, /<h3 id="credential-\d+-title">Person credential<\/h3>/);
      assert.ok(html.includes(`Issued by ${credential.issuer.label} ·`));
      assert.ok(html.includes(`<code>${world.issuer.did}</code></details>`), 'the full DID on request');
      assert.match(html, /<dt>first_name<\/dt><dd>Ada<\/dd>/);
      assert.match(html, /arrived from Issuer/);
    });

    test('the history keeps a presentation: the verifier and the disclosed claim, not the others', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const transaction = await world.verifier.createRequest({ by: 'reference' });
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      await approve(world.server, path, transaction);
      const cookie = await openWallet(world.server, ada.account);
      const [shared] = (await walletJson(world.server, cookie)).history;
      assert.equal(shared.kind, 'presentation');
      assert.equal(shared.credential.id, ada.credentialId);
      assert.equal(shared.verifier.client_id, transaction.clientId);
      assert.match(shared.verifier.certificate_subject, /CN=/);
      assert.deepEqual(shared.claims, [['credentialSubject', 'first_name']]);
      assert.equal(shared.outcome, 'delivered');
      const html = await (await fetch(`${world.server.url}/wallet`, { headers: { cookie } })).text();
      assert.match(html, /shared credentialSubject\.first_name of <strong>Person credential<\/strong>/);
      assert.doesNotMatch(html, /shared[^<]*last_name/);
      // The history is sealed: the database row says only that something happened.
      const rows = await world.server.database.db.selectFrom('wallet_history').selectAll().execute();
      assert.ok(rows.length > 0);
      for (const row of rows) assert.doesNotMatch(row.detail_sealed, /first_name|PersonCredential|Verifier/);
    });

    test('deletion from the page: gone from the page, the API and presentations; the other stays', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const second = await issueTo(world, ada.did, { first_name: 'Augusta' });
      const cookie = await openWallet(world.server, ada.account);
      const token = await pageToken(world.server, cookie);
      const wallet = await walletJson(world.server, cookie);
      const first = wallet.credentials.find((c: Json) => c.id === ada.credentialId);

      assert.equal((await deleteFromPage(world.server, cookie, first.key, undefined)).status, 403);
      assert.equal((await deleteFromPage(world.server, cookie, first.key, 'wrong')).status, 403);
      const crossSite = await deleteFromPage(world.server, cookie, first.key, token, {
        origin: 'https://evil.example',
      });
      assert.equal(crossSite.status, 403);
      assert.equal((await deleteFromPage(world.server, 'coffer_session=x', first.key, token)).status, 401);
      assert.equal((await deleteFromPage(world.server, cookie, 'abc', token)).status, 400);

      const deleted = await deleteFromPage(world.server, cookie, first.key, token);
      assert.equal(deleted.status, 204);
      assert.equal((await deleteFromPage(world.server, cookie, first.key, token)).status, 404);
      const after = await walletJson(world.server, cookie);
      assert.deepEqual(
        after.credentials.map((c: Json) => c.id),
        [second['id']],
      );
      const listed = await world.server.request('GET', '/v1/openidc/credentials', { headers: ada.bearer });
      assert.deepEqual(
        (listed.body as Json).data.map((c: Json) => c.id),
        [second['id']],
      );
      // Not offered to verifiers any more: the consent sees only the other one.
      const transaction = await world.verifier.createRequest({ by: 'reference' });
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      const consent = (await interactionView(world.server, path)).body.consent;
      assert.deepEqual(
        consent.requests[0].candidates.map((c: Json) => c.credential_id),
        [second['id']],
      );
      // Its block is gone from the store too.
      const rows = await world.server.database.db
        .selectFrom('credentials')
        .select('credential_id')
        .where('credential_id', '=', ada.credentialId)
        .execute();
      assert.equal(rows.length, 0);
    });

    test('more credentials than the page shows: the newest, the count of all, the download for the rest', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      for (let i = 0; i < CREDENTIALS_SHOWN; i += 10)
        await Promise.all(Array.from({ length: 10 }, () => issueTo(world, ada.did)));
      const held = CREDENTIALS_SHOWN + 1;
      const cookie = await openWallet(world.server, ada.account);
      const wallet = await walletJson(world.server, cookie);
      assert.equal(wallet.credentialsHeld, held);
      assert.equal(wallet.credentials.length, CREDENTIALS_SHOWN);
      assert.ok(
        !wallet.credentials.some((c: Json) => c.id === ada.credentialId),
        'the oldest is the one left out',
      );
      const html = await (await fetch(`${world.server.url}/wallet`, { headers: { cookie } })).text();
      assert.ok(html.includes(`Credentials (<span id="credential-count">${held}</span>)`));
      assert.match(html, new RegExp(`shows your newest ${CREDENTIALS_SHOWN} of ${held} credentials`));
      assert.equal(html.match(/<h3 id="credential-\d+-title">/g)?.length, CREDENTIALS_SHOWN);
      assert.match(
        html,
        new RegExp(`</strong> · ${held} credentials</span>`),
        'the account counts all it holds',
      );
      const exported = await fetch(`${world.server.url}/wallet/export`, { headers: { cookie } });
      assert.equal(exported.status, 200);
      const all = JSON.stringify(await exported.json());
      assert.ok(all.includes(ada.credentialId), 'the download holds the one the page left out');
    });

    test("one person cannot delete another's credential from the page", async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const bob = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const adaCookie = await openWallet(world.server, ada.account);
      const bobKey = (await walletJson(world.server, await openWallet(world.server, bob.account)))
        .credentials[0].key;
      const answer = await deleteFromPage(
        world.server,
        adaCookie,
        bobKey,
        await pageToken(world.server, adaCookie),
      );
      assert.equal(answer.status, 404);
      assert.equal(
        (await walletJson(world.server, await openWallet(world.server, bob.account))).credentials.length,
        1,
      );
    });

    test('DELETE /v1/openidc/credentials/{id}: 204 for the user, 404 otherwise, 401 without a token', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const bob = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const path = `/v1/openidc/credentials/${encodeURIComponent(ada.credentialId)}`;
      assert.equal((await world.server.request('DELETE', path)).status, 401);
      const foreign = await world.server.request('DELETE', path, { headers: bob.bearer });
      assert.equal(foreign.status, 404);
      assert.equal((foreign.body as Json).error, 'not_found');
      assert.equal((await world.server.request('DELETE', path, { headers: ada.bearer })).status, 204);
      assert.equal((await world.server.request('DELETE', path, { headers: ada.bearer })).status, 404);
      const listed = await world.server.request('GET', '/v1/openidc/credentials', { headers: ada.bearer });
      assert.deepEqual((listed.body as Json).data, []);
      const bobs = await world.server.request('GET', '/v1/openidc/credentials', { headers: bob.bearer });
      assert.equal((bobs.body as Json).data.length, 1);
    });

    test('sign-out from the page ends the session: the old cookie is refused, /wallet asks to log in', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const cookie = await openWallet(world.server, ada.account);
      const token = await pageToken(world.server, cookie);
      const forged = await fetch(`${world.server.url}/wallet/sign-out`, {
        method: 'POST',
        headers: { cookie },
      });
      assert.equal(forged.status, 403);
      const out = await fetch(`${world.server.url}/wallet/sign-out`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': token },
      });
      assert.equal(out.status, 200);
      assert.deepEqual(await out.json(), { redirect_to: '/wallet/signed-out' });
      assert.match(out.headers.get('set-cookie') ?? '', /Max-Age=0/);
      const again = await fetch(`${world.server.url}/wallet`, { headers: { cookie }, redirect: 'manual' });
      assert.equal(again.status, 303);
      assert.match(again.headers.get('location')!, /^\/interaction\//);
      assert.equal((await deleteFromPage(world.server, cookie, 1, token)).status, 401);
    });

    test('a presentation interaction offers sign-out: the session ends and the consent asks to log in again', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const transaction = await world.verifier.createRequest({ by: 'reference' });
      const path = await startConsent(world.server, transaction.query);
      const login = await logInWithSiweInConsent(world.server, path, ada.account);
      const cookie = login.cookie!.split(';')[0]!;
      assert.equal((await interactionView(world.server, path)).body.logged_in, true);
      const out = await postInteraction(world.server, path, 'sign-out', {}, { cookie });
      assert.equal(out.status, 200);
      assert.deepEqual(out.body, { next: 'consent' });
      assert.equal((await interactionView(world.server, path)).body.logged_in, false);
      const wallet = await fetch(`${world.server.url}/wallet`, { headers: { cookie }, redirect: 'manual' });
      assert.equal(wallet.status, 303);
    });
  });
}
