import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '../../src/clients/client-admin.ts';
import { findClient } from '../../src/clients/client-repository.ts';
import { OIDC_PATHS } from '../../src/oidc/discovery.ts';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addAdmin, consoleLogin, formToken, getPage, postForm } from './console-helpers.ts';

const NEW_APP = {
  name: 'Library app',
  redirect_uris: 'https://library.example/cb\r\nhttps://library.example/cb2',
  post_logout_redirect_uris: 'https://library.example/bye',
  kind: 'confidential',
  refresh_token: 'yes',
};

/** What the token endpoint says of a client secret: invalid_client (401), or past it to the code. */
async function tokenAnswer(server: TestServer, clientId: number, secret: string): Promise<number> {
  const response = await fetch(`${server.url}${OIDC_PATHS.token}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'no-such-code',
      redirect_uri: 'https://library.example/cb',
    }),
  });
  return response.status;
}

for (const kind of DATABASE_KINDS) {
  describe(`the console's apps, written by an owner, on ${kind}`, () => {
    let server: TestServer;
    let tenantA: { clientId: number; token: string };
    let tenantB: { clientId: number; token: string };
    let ownerId: number;
    let owner: string;
    let operator: string;
    let auditor: string;
    const appsOf = (clientId: number) => `/console/clients/${clientId}/apps`;

    const events = async (type: string) =>
      (await server.request('GET', `/v1/audit?type=${type}`, { headers: { 'x-api-token': tenantA.token } }))
        .body.data as Array<{ actor: string; targets: Record<string, number> }>;

    /** The owner's console creates an app; answers its client_id and the secret shown once. */
    async function ownerCreates(fields: Record<string, string> = NEW_APP) {
      const token = await formToken(server, owner, tenantA.clientId);
      const created = await postForm(server, owner, appsOf(tenantA.clientId), {
        ...fields,
        csrf_token: token,
      });
      const html = await created.text();
      assert.equal(created.status, 201, html);
      assert.equal(created.headers.get('cache-control'), 'no-store');
      const clientId = Number(html.match(/App (\d+) was created/)?.[1]);
      const secret = html.match(/<code id="client-secret">([^<]+)<\/code>/)?.[1];
      return { clientId, secret, html };
    }

    before(async () => {
      server = await startTestServer(kind);
      tenantA = await server.createMaster('University A');
      tenantB = await server.createMaster('Shop B');
      ownerId = await addAdmin(server, tenantA.clientId, { email: 'owner@a.example' }, 'owner');
      await addAdmin(server, tenantA.clientId, { email: 'operator@a.example' }, 'operator');
      await addAdmin(server, tenantA.clientId, { email: 'auditor@a.example' }, 'auditor');
      owner = (await consoleLogin(server, 'owner@a.example')).cookie;
      operator = (await consoleLogin(server, 'operator@a.example')).cookie;
      auditor = (await consoleLogin(server, 'auditor@a.example')).cookie;
    });
    after(async () => {
      await server?.close();
    });

    test('an owner creates an app: a sub-client whose secret is shown once and works at /token', async () => {
      const { clientId, secret, html } = await ownerCreates();
      assert.ok(secret, 'the secret is on the result page');
      assert.match(html, /shown only this once/);
      assert.doesNotMatch(html, /api_token/, 'no API token is handed out');
      const row = await findClient(server.database.db, clientId);
      assert.equal(row?.parent_id, tenantA.clientId);
      assert.ok(row?.client_secret_hash && !row.client_secret_hash.includes(secret!), 'only a hash is kept');
      assert.deepEqual(JSON.parse(row!.redirect_uris), [
        'https://library.example/cb',
        'https://library.example/cb2',
      ]);
      assert.deepEqual(JSON.parse(row!.grant_types), ['authorization_code', 'refresh_token']);
      assert.notEqual(await tokenAnswer(server, clientId, secret!), 401, 'the shown secret authenticates');
      const page = await (await getPage(server, owner, appsOf(tenantA.clientId))).text();
      assert.match(page, /Library app/);
      assert.ok(!page.includes(secret!), 'the apps page never shows it again');
      const [event] = await events('client.create');
      assert.equal(event?.actor, `admin:${ownerId}`);
      assert.equal(event?.targets['client_id'], clientId);
    });

    test('a public app has no secret; a bad redirect URI comes back in the form', async () => {
      const { clientId, secret } = await ownerCreates({ ...NEW_APP, name: 'Phone app', kind: 'public' });
      assert.equal(secret, undefined);
      assert.equal((await findClient(server.database.db, clientId))?.client_secret_hash, null);
      const token = await formToken(server, owner, tenantA.clientId);
      const refused = await postForm(server, owner, appsOf(tenantA.clientId), {
        ...NEW_APP,
        name: 'Broken app',
        redirect_uris: 'not a url',
        csrf_token: token,
      });
      assert.equal(refused.status, 400);
      const html = await refused.text();
      assert.match(html, /role="alert"[\s\S]*not an absolute URL/);
      assert.match(html, /value="Broken app"/, 'what was typed is kept');
    });

    test('an owner edits the redirect URIs and refresh grant; the event names the admin', async () => {
      const { clientId } = await ownerCreates({ ...NEW_APP, name: 'Edited app' });
      const token = await formToken(server, owner, tenantA.clientId);
      const saved = await postForm(server, owner, `${appsOf(tenantA.clientId)}/${clientId}`, {
        redirect_uris: 'https://new.example/cb',
        post_logout_redirect_uris: '',
        refresh_token: 'no',
        csrf_token: token,
      });
      assert.equal(saved.status, 303);
      assert.equal(saved.headers.get('location'), `${appsOf(tenantA.clientId)}?updated=${clientId}`);
      const row = await findClient(server.database.db, clientId);
      assert.deepEqual(JSON.parse(row!.redirect_uris), ['https://new.example/cb']);
      assert.deepEqual(JSON.parse(row!.post_logout_redirect_uris), []);
      assert.deepEqual(JSON.parse(row!.grant_types), ['authorization_code']);
      const [event] = await events('client.update');
      assert.equal(event?.actor, `admin:${ownerId}`);
      assert.equal(event?.targets['client_id'], clientId);
      // The master edits its own registration the same way.
      const own = await postForm(server, owner, `${appsOf(tenantA.clientId)}/${tenantA.clientId}`, {
        redirect_uris: 'https://university.example/cb',
        refresh_token: 'no',
        csrf_token: token,
      });
      assert.equal(own.status, 303);
    });

    test('rotation needs the confirmation; the new secret works and the old one stops', async () => {
      const { clientId, secret: old } = await ownerCreates({ ...NEW_APP, name: 'Rotated app' });
      const confirm = await getPage(server, owner, `${appsOf(tenantA.clientId)}/${clientId}/rotate`);
      assert.equal(confirm.status, 200);
      assert.match(await confirm.text(), new RegExp(`Rotate the secret of app ${clientId}`));
      const token = await formToken(server, owner, tenantA.clientId);
      const path = `${appsOf(tenantA.clientId)}/${clientId}/rotate`;
      const unconfirmed = await postForm(server, owner, path, { csrf_token: token });
      assert.equal(unconfirmed.status, 400);
      assert.notEqual(await tokenAnswer(server, clientId, old!), 401, 'nothing rotated without confirming');
      const rotated = await postForm(server, owner, path, { confirm: 'rotate', csrf_token: token });
      const html = await rotated.text();
      assert.equal(rotated.status, 200, html);
      const fresh = html.match(/<code id="client-secret">([^<]+)<\/code>/)?.[1];
      assert.ok(fresh && fresh !== old);
      assert.equal(await tokenAnswer(server, clientId, old!), 401, 'the old secret no longer works');
      assert.notEqual(await tokenAnswer(server, clientId, fresh), 401, 'the new one does');
      const [event] = await events('client.secret_rotate');
      assert.equal(event?.actor, `admin:${ownerId}`);
      assert.equal(event?.targets['client_id'], clientId);
    });

    test('wallet log-in: refused until the app is a verifier, then on with the CLI’s configuration, then off', async () => {
      const { clientId } = await ownerCreates({ ...NEW_APP, name: 'Wallet app' });
      const token = await formToken(server, owner, tenantA.clientId);
      const path = `${appsOf(tenantA.clientId)}/${clientId}/wallet-login`;
      const on = await postForm(server, owner, path, {
        wallet_login: 'on',
        wallet_login_json: '{"dcql_query": {}, "account_claim": ["email"]}',
        csrf_token: token,
      });
      assert.equal(on.status, 400, 'checked as the CLI checks it');
      // Once the app is a verifier, the console takes what `coffer client set --wallet-login` takes.
      const enabled = await coffer(server, 'verifier', 'enable', '--client', String(clientId));
      assert.equal(enabled.code, 0, enabled.stderr);
      const query = {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:eudi:pid:1'] },
            claims: [{ path: ['email'] }],
          },
        ],
      };
      const turnedOn = await postForm(server, owner, path, {
        wallet_login: 'on',
        wallet_login_json: JSON.stringify({ dcql_query: query, account_claim: ['email'] }),
        csrf_token: token,
      });
      assert.equal(turnedOn.status, 303, await turnedOn.clone().text());
      const stored = JSON.parse((await findClient(server.database.db, clientId))!.wallet_login!);
      assert.deepEqual(stored.account_claim, ['email']);
      const [event] = await events('client.update');
      assert.equal(event?.actor, `admin:${ownerId}`);
      assert.equal(event?.targets['client_id'], clientId);
      const off = await postForm(server, owner, path, { wallet_login: 'off', csrf_token: token });
      assert.equal(off.status, 303);
      assert.equal((await findClient(server.database.db, clientId))?.wallet_login, null);
    });

    test('operators and auditors read the apps but change nothing (403)', async () => {
      const { clientId } = await ownerCreates({ ...NEW_APP, name: 'Guarded app' });
      for (const cookie of [operator, auditor]) {
        const page = await getPage(server, cookie, appsOf(tenantA.clientId));
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.match(html, /Guarded app/);
        assert.doesNotMatch(html, /<form[^>]*method="post"[^>]*apps/);
        const token = await formToken(server, cookie, tenantA.clientId);
        const base = appsOf(tenantA.clientId);
        for (const [path, fields] of [
          [base, NEW_APP],
          [`${base}/${clientId}`, { redirect_uris: 'https://evil.example/cb' }],
          [`${base}/${clientId}/rotate`, { confirm: 'rotate' }],
          [`${base}/${clientId}/wallet-login`, { wallet_login: 'off' }],
        ] as Array<[string, Record<string, string>]>)
          assert.equal(
            (await postForm(server, cookie, path, { ...fields, csrf_token: token })).status,
            403,
            path,
          );
        assert.equal((await getPage(server, cookie, `${base}/${clientId}/rotate`)).status, 403);
      }
      assert.deepEqual(JSON.parse((await findClient(server.database.db, clientId))!.redirect_uris), [
        'https://library.example/cb',
        'https://library.example/cb2',
      ]);
    });

    test('a write without the page token or with a forged one is 403', async () => {
      const { clientId } = await ownerCreates({ ...NEW_APP, name: 'Tokenless app' });
      const other = await formToken(server, operator, tenantA.clientId);
      for (const fields of [{}, { csrf_token: 'forged' }, { csrf_token: other }] as Array<
        Record<string, string>
      >) {
        const base = appsOf(tenantA.clientId);
        assert.equal((await postForm(server, owner, base, { ...NEW_APP, ...fields })).status, 403);
        assert.equal(
          (
            await postForm(server, owner, `${base}/${clientId}`, {
              redirect_uris: 'https://evil.example/cb',
              ...fields,
            })
          ).status,
          403,
        );
        assert.equal(
          (await postForm(server, owner, `${base}/${clientId}/rotate`, { confirm: 'rotate', ...fields }))
            .status,
          403,
        );
      }
      assert.equal(JSON.parse((await findClient(server.database.db, clientId))!.redirect_uris).length, 2);
    });

    test("another tenant's app and a sibling's are not found, like a missing one", async () => {
      const theirs = await createClient(server.database.db, { name: 'Shop app', parentId: tenantB.clientId });
      const token = await formToken(server, owner, tenantA.clientId);
      const base = appsOf(tenantA.clientId);
      for (const id of [theirs.client_id, tenantB.clientId, 999_999]) {
        assert.equal(
          (
            await postForm(server, owner, `${base}/${id}`, {
              redirect_uris: 'https://evil.example/cb',
              csrf_token: token,
            })
          ).status,
          404,
        );
        assert.equal(
          (await postForm(server, owner, `${base}/${id}/rotate`, { confirm: 'rotate', csrf_token: token }))
            .status,
          404,
        );
        assert.equal(
          (
            await postForm(server, owner, `${base}/${id}/wallet-login`, {
              wallet_login: 'off',
              csrf_token: token,
            })
          ).status,
          404,
        );
        assert.equal((await getPage(server, owner, `${base}/${id}/rotate`)).status, 404);
      }
      // Through the other tenant's path the owner is no administrator at all.
      assert.equal(
        (
          await postForm(server, owner, `${appsOf(tenantB.clientId)}/${theirs.client_id}`, {
            redirect_uris: 'https://evil.example/cb',
            csrf_token: token,
          })
        ).status,
        404,
      );
      assert.equal(
        (await tokenAnswer(server, theirs.client_id, theirs.client_secret!)) !== 401,
        true,
        'their secret is untouched',
      );
      assert.deepEqual(
        JSON.parse((await findClient(server.database.db, theirs.client_id))!.redirect_uris),
        [],
      );
    });
  });
}
