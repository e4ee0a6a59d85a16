import assert from 'node:assert/strict';
import { verify, X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { hashSecret } from '../../src/keys/secrets.ts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { sha256 } from '../helpers/issuers/sd-jwt-issuer.ts';
import {
  decideIssuance,
  type HostedWallet,
  type IssuanceWorld,
  listed,
  startIssuance,
  startIssuanceWorld,
} from '../oid4vci/issuance-helpers.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { pageToken } from '../wallet/wallet-helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

for (const kind of DATABASE_KINDS) {
  describe(`the person's export and erasure from the wallet page, on ${kind}`, () => {
    let world: IssuanceWorld;
    before(async () => {
      world = await startIssuanceWorld(kind);
    });
    after(async () => {
      await world?.close();
    });

    /** A person with an account at each of two relying parties (one wallet address), one credential in the first. */
    async function personWithTwoAccounts() {
      const account = privateKeyToAccount(generatePrivateKey());
      const first = await logInUser(world.server, world.rp, account);
      const second = await logInUser(world.server, await registerRelyingParty(world.server), account);
      const wallet: HostedWallet = { server: world.server, account, user: first, cookie: undefined };
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      const interactionPath = await startIssuance(wallet, byReferenceQuery);
      const answer = await decideIssuance(wallet, interactionPath, {
        decision: 'approve',
        account: first.did,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return { account, first, second, wallet, cookie: wallet.cookie! };
    }

    const sessionUser = async (cookie: string) =>
      (
        await world.server.database.db
          .selectFrom('sessions')
          .select('user_id')
          .where('id_hash', '=', hashSecret(cookie.slice(cookie.indexOf('=') + 1)))
          .executeTakeFirst()
      )?.user_id;

    test('GET /wallet/export: every account of the person, its profile, its credentials as issued and its history, as a download', async () => {
      const { first, second, wallet, cookie } = await personWithTwoAccounts();
      const refused = await fetch(`${world.server.url}/wallet/export`, {
        headers: { accept: 'application/json' },
      });
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as Json).error, 'unauthorized');
      const refusedPage = await fetch(`${world.server.url}/wallet/export`);
      assert.equal(refusedPage.status, 401);
      assert.match(
        await refusedPage.text(),
        /You are not logged in to your wallet/,
        'a person is told in a page',
      );

      const response = await fetch(`${world.server.url}/wallet/export`, { headers: { cookie } });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.match(
        response.headers.get('content-disposition') ?? '',
        /^attachment; filename="wallet-export-\d{4}-\d{2}-\d{2}\.json"$/,
      );
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const exported = (await response.json()) as Json;
      assert.deepEqual(exported.accounts.map((a: Json) => a.did).sort(), [first.did, second.did].sort());
      const holder = exported.accounts.find((a: Json) => a.did === first.did);
      assert.equal(holder.tenant.client_id, world.rp.clientId);
      assert.equal(holder.wallet_address, wallet.account.address.toLowerCase());
      assert.equal(typeof holder.profile, 'object');
      assert.equal(holder.credentials.length, 1);
      const [credential] = holder.credentials;
      assert.equal(credential.format, 'dc+sd-jwt');
      assert.equal(credential.received_from, world.issuer.credentialIssuer);
      // As issued: the very SD-JWT the list endpoint hands the app, with every disclosure.
      const [entry] = await listed(wallet);
      assert.equal(credential.id, entry.id);
      assert.equal(typeof credential.credential, 'string');
      assert.ok(
        JSON.stringify(entry).includes(credential.credential),
        'the listed credential is the exported one',
      );
      assert.ok(credential.credential.split('~').length > 2, 'with its disclosures');
      // Someone else's library reads the export: @sd-jwt/sd-jwt-vc checks the issuer's signature.
      const issuerKey = new X509Certificate(Buffer.from(world.issuer.identity.signer.der, 'base64'))
        .publicKey;
      const reader = new SDJwtVcInstance({
        hasher: async (data) => sha256(data),
        hashAlg: 'sha-256',
        verifier: async (data, signature) =>
          verify(
            'sha256',
            Buffer.from(data),
            { key: issuerKey, dsaEncoding: 'ieee-p1363' },
            Buffer.from(signature, 'base64url'),
          ),
      });
      await reader.verify(credential.credential);
      const claims = (await reader.getClaims(credential.credential)) as Record<string, unknown>;
      assert.equal(claims['given_name'], 'Ada');
      assert.deepEqual(
        holder.history.map((e: Json) => [e.kind, e.credential.id]),
        [['arrival', credential.id]],
      );
      const other = exported.accounts.find((a: Json) => a.did === second.did);
      assert.deepEqual(other.credentials, []);
      assert.equal(JSON.stringify(exported).includes('"d":'), false, 'no private key travels in an export');
    });

    test("the page's erasure: only with the page's token, only the person's own accounts, and the session ends with its own account", async () => {
      const { first, second, cookie } = await personWithTwoAccounts();
      const stranger = await personWithTwoAccounts();
      const token = await pageToken(world.server, cookie);
      const erase = (key: number, headers: Record<string, string>) =>
        fetch(`${world.server.url}/wallet/accounts/${key}`, {
          method: 'DELETE',
          headers: { cookie, accept: 'application/json', ...headers },
        });

      assert.equal((await erase(first.userId, {})).status, 403, 'no page token');
      assert.equal((await erase(first.userId, { 'x-csrf-token': 'forged' })).status, 403);
      const foreign = await erase(stranger.first.userId, { 'x-csrf-token': token });
      assert.equal(foreign.status, 404, "another person's account is not found");
      assert.equal((await erase(0, { 'x-csrf-token': token })).status, 400);

      const session = await sessionUser(cookie);
      assert.ok(session === first.userId || session === second.userId);
      const [other, own] = session === first.userId ? [second, first] : [first, second];
      const kept = await erase(other.userId, { 'x-csrf-token': token });
      assert.equal(kept.status, 200);
      assert.deepEqual(await kept.json(), { redirect_to: '/wallet' });
      const still = await fetch(`${world.server.url}/wallet/export`, { headers: { cookie } });
      assert.deepEqual(
        ((await still.json()) as Json).accounts.map((a: Json) => a.did),
        [own.did],
        'the session stays with the account it belongs to',
      );

      const ended = await erase(own.userId, { 'x-csrf-token': token });
      assert.equal(ended.status, 200);
      assert.deepEqual(await ended.json(), { redirect_to: '/wallet/account-deleted' });
      assert.match(ended.headers.get('set-cookie') ?? '', /coffer_session=;.*Max-Age=0/i);
      const gone = await fetch(`${world.server.url}/wallet/export`, {
        headers: { cookie, accept: 'application/json' },
      });
      assert.equal(gone.status, 401);
      const page = await fetch(`${world.server.url}/wallet/account-deleted`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /Your account was deleted/);
      assert.equal(
        (await world.server.request('GET', '/v2/openidc/user', { headers: stranger.first.bearer })).status,
        200,
        "the stranger's accounts are untouched",
      );
      // Each erasure is on the trail as the person's own act (issue #42); the refused ones left nothing.
      const erasures = await world.server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', '=', 'user.erase')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        erasures
          .map((row) => [row.actor, JSON.parse(row.targets).user_id])
          .filter(([, id]) => id === other.userId || id === own.userId),
        [
          [`person:${other.userId}`, other.userId],
          [`person:${own.userId}`, own.userId],
        ],
      );
    });
  });
}
