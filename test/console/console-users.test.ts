import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, setClientSettings } from '../../src/clients/client-admin.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { fixedKeyRing } from '../../src/keys/master-key-ring.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addAdmin, consoleLogin, formToken, getPage, postForm } from './console-helpers.ts';

const PROFILE = { email_address: 'grace@people.example', first_name: 'Grace', last_name: 'Hopper' };

for (const kind of DATABASE_KINDS) {
  describe(`the console's users and apps, headless, on ${kind}`, () => {
    let server: TestServer;
    let tenantA: { clientId: number; token: string };
    let tenantB: { clientId: number; token: string };
    let ownerId: number;
    let owner: string;
    let auditor: string;
    let operator: string;
    let operatorId: number;
    const usersOf = (clientId: number) => `/console/clients/${clientId}/users`;

    /** A user made through the API, as a tenant's backend makes one. */
    async function apiUser(token: string, email: string): Promise<number> {
      const created = await server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': token },
        body: { profile: { ...PROFILE, email_address: email } },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return created.body.data.user_id;
    }

    const lastEvent = async (type: string) =>
      (await server.request('GET', `/v1/audit?type=${type}`, { headers: { 'x-api-token': tenantA.token } }))
        .body.data[0];

    before(async () => {
      server = await startTestServer(kind);
      tenantA = await server.createMaster('University A');
      tenantB = await server.createMaster('Shop B');
      ownerId = await addAdmin(server, tenantA.clientId, { email: 'owner@a.example' }, 'owner');
      operatorId = await addAdmin(server, tenantA.clientId, { email: 'operator@a.example' }, 'operator');
      await addAdmin(server, tenantA.clientId, { email: 'auditor@a.example' }, 'auditor');
      await addAdmin(server, tenantB.clientId, { email: 'owner@b.example' }, 'owner');
      owner = (await consoleLogin(server, 'owner@a.example')).cookie;
      operator = (await consoleLogin(server, 'operator@a.example')).cookie;
      auditor = (await consoleLogin(server, 'auditor@a.example')).cookie;
    });
    after(async () => {
      await server?.close();
    });

    test('an owner finds a user by the exact e-mail address, whatever its case, and reads it', async () => {
      const userId = await apiUser(tenantA.token, 'ada@people.example');
      const token = await formToken(server, owner, tenantA.clientId);
      const found = await postForm(server, owner, `${usersOf(tenantA.clientId)}/find`, {
        email: ' Ada@People.example ',
        csrf_token: token,
      });
      assert.equal(found.status, 303);
      assert.equal(found.headers.get('location'), `${usersOf(tenantA.clientId)}/${userId}`);
      const page = await getPage(server, owner, found.headers.get('location')!);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /did:key:/);
      assert.match(html, /<dt>Credentials held<\/dt><dd>0<\/dd>/);
      assert.match(html, /<dt>given_name<\/dt><dd>Grace<\/dd>/);
      assert.match(html, /<dt>email<\/dt><dd>ada@people\.example<\/dd>/);
      assert.match(html, /Erase this user/);
      // A part of the address finds nothing, and the form says so with what was typed.
      const partial = await postForm(server, owner, `${usersOf(tenantA.clientId)}/find`, {
        email: 'ada@people',
        csrf_token: token,
      });
      assert.equal(partial.status, 404);
      const again = await partial.text();
      assert.match(again, /No user of this client has that e-mail address/);
      assert.match(again, /id="find-email"[^>]*aria-invalid="true"[^>]*value="ada@people"/);
      // The users page lists no addresses.
      const list = await (await getPage(server, owner, usersOf(tenantA.clientId))).text();
      assert.doesNotMatch(list, /ada@people\.example/);
    });

    test('an owner creates a user as POST /v1/user/create; the trail names the administrator', async () => {
      const token = await formToken(server, owner, tenantA.clientId);
      const created = await postForm(server, owner, usersOf(tenantA.clientId), {
        ...PROFILE,
        middle_name: '',
        user_name: '',
        date_of_birth: '1906-12-09',
        csrf_token: token,
      });
      assert.equal(created.status, 303, await created.clone().text());
      const location = created.headers.get('location')!;
      const match = location.match(new RegExp(`^${usersOf(tenantA.clientId)}/(\\d+)\\?created=1$`));
      assert.ok(match, location);
      const html = await (await getPage(server, owner, location)).text();
      assert.match(html, /role="status">User \d+ was created/);
      assert.match(html, /<dt>birthdate<\/dt><dd>1906-12-09<\/dd>/);
      const event = await lastEvent('user.create');
      assert.equal(event.actor, `admin:${ownerId}`);
      assert.equal(event.targets.user_id, Number(match[1]));
      // The same address again is the API's 409, in the form.
      const twice = await postForm(server, owner, usersOf(tenantA.clientId), {
        ...PROFILE,
        csrf_token: token,
      });
      assert.equal(twice.status, 409);
      assert.match(await twice.text(), /already exists/);
    });

    test('a create form with mistakes comes back with each field’s problem and what was typed', async () => {
      const token = await formToken(server, owner, tenantA.clientId);
      const response = await postForm(server, owner, usersOf(tenantA.clientId), {
        email_address: 'not an address',
        first_name: 'Ada',
        last_name: '',
        date_of_birth: '2999-01-01',
        csrf_token: token,
      });
      assert.equal(response.status, 400);
      const html = await response.text();
      assert.match(html, /role="alert"/);
      assert.match(html, /id="email_address"[^>]*aria-invalid="true"[^>]*value="not an address"/);
      assert.match(html, /id="last_name"[^>]*aria-invalid="true"/);
      assert.match(html, /value="Ada"/);
      // The service's own rules (a date in the future) come back the same way.
      const future = await postForm(server, owner, usersOf(tenantA.clientId), {
        ...PROFILE,
        email_address: 'future@people.example',
        date_of_birth: '2999-01-01',
        csrf_token: token,
      });
      assert.equal(future.status, 400);
      assert.match(await future.text(), /id="date_of_birth"[^>]*aria-invalid="true"/);
    });

    test('an operator erases a user after the confirmation step, as DELETE /v1/user/{id}', async () => {
      const userId = await apiUser(tenantA.token, 'erase-me@people.example');
      const confirm = await getPage(server, operator, `${usersOf(tenantA.clientId)}/${userId}/erase`);
      assert.equal(confirm.status, 200);
      assert.match(await confirm.text(), new RegExp(`Erase user ${userId}`));
      const token = await formToken(server, operator, tenantA.clientId);
      // Without the confirmation field nothing happens.
      const unconfirmed = await postForm(server, operator, `${usersOf(tenantA.clientId)}/${userId}/erase`, {
        csrf_token: token,
      });
      assert.equal(unconfirmed.status, 400);
      assert.ok(
        await server.database.db
          .selectFrom('users')
          .select('user_id')
          .where('user_id', '=', userId)
          .executeTakeFirst(),
      );
      const erased = await postForm(server, operator, `${usersOf(tenantA.clientId)}/${userId}/erase`, {
        confirm: 'erase',
        csrf_token: token,
      });
      assert.equal(erased.status, 303);
      assert.equal(erased.headers.get('location'), `${usersOf(tenantA.clientId)}?erased=${userId}`);
      assert.equal(
        await server.database.db
          .selectFrom('users')
          .select('user_id')
          .where('user_id', '=', userId)
          .executeTakeFirst(),
        undefined,
      );
      const event = await lastEvent('user.erase');
      assert.equal(event.actor, `admin:${operatorId}`);
      assert.equal(event.targets.user_id, userId);
      assert.equal((await getPage(server, operator, `${usersOf(tenantA.clientId)}/${userId}`)).status, 404);
      // The address can sign up again.
      await apiUser(tenantA.token, 'erase-me@people.example');
    });

    test('an auditor finds and reads users but every write is 403 and changes nothing', async () => {
      const userId = await apiUser(tenantA.token, 'kept@people.example');
      const token = await formToken(server, auditor, tenantA.clientId);
      const found = await postForm(server, auditor, `${usersOf(tenantA.clientId)}/find`, {
        email: 'kept@people.example',
        csrf_token: token,
      });
      assert.equal(found.status, 303);
      const page = await getPage(server, auditor, `${usersOf(tenantA.clientId)}/${userId}`);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.doesNotMatch(html, /Erase this user/);
      assert.doesNotMatch(
        await (await getPage(server, auditor, usersOf(tenantA.clientId))).text(),
        /Create a user/,
      );
      assert.equal(
        (await getPage(server, auditor, `${usersOf(tenantA.clientId)}/${userId}/erase`)).status,
        403,
      );
      const erase = await postForm(server, auditor, `${usersOf(tenantA.clientId)}/${userId}/erase`, {
        confirm: 'erase',
        csrf_token: token,
      });
      assert.equal(erase.status, 403);
      const create = await postForm(server, auditor, usersOf(tenantA.clientId), {
        ...PROFILE,
        email_address: 'refused@people.example',
        csrf_token: token,
      });
      assert.equal(create.status, 403);
      assert.ok(
        await server.database.db
          .selectFrom('users')
          .select('user_id')
          .where('user_id', '=', userId)
          .executeTakeFirst(),
      );
      const users = await server.database.db
        .selectFrom('users')
        .select('user_id')
        .where('tenant_id', '=', tenantA.clientId)
        .execute();
      assert.ok(users.length > 0);
      const refusedRow = await server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': tenantA.token },
        body: { profile: { ...PROFILE, email_address: 'refused@people.example' } },
      });
      assert.equal(refusedRow.status, 201, 'the refused create wrote nothing');
    });

    test('a write without the page token or with a forged one is 403', async () => {
      const userId = await apiUser(tenantA.token, 'forged@people.example');
      const path = `${usersOf(tenantA.clientId)}/${userId}/erase`;
      for (const fields of [{ confirm: 'erase' }, { confirm: 'erase', csrf_token: 'forged' }] as Array<
        Record<string, string>
      >) {
        assert.equal((await postForm(server, owner, path, fields)).status, 403);
        assert.equal(
          (await postForm(server, owner, `${usersOf(tenantA.clientId)}/find`, { ...fields, email: 'x@y.z' }))
            .status,
          403,
        );
        assert.equal(
          (await postForm(server, owner, usersOf(tenantA.clientId), { ...fields, ...PROFILE })).status,
          403,
        );
      }
      // Another session's token is not this session's.
      const other = await formToken(server, operator, tenantA.clientId);
      assert.equal(
        (await postForm(server, owner, path, { confirm: 'erase', csrf_token: other })).status,
        403,
      );
      assert.ok(
        await server.database.db
          .selectFrom('users')
          .select('user_id')
          .where('user_id', '=', userId)
          .executeTakeFirst(),
      );
    });

    test("another tenant's user and another tenant's pages are not found", async () => {
      const theirs = await apiUser(tenantB.token, 'theirs@people.example');
      const token = await formToken(server, owner, tenantA.clientId);
      assert.equal((await getPage(server, owner, `${usersOf(tenantA.clientId)}/${theirs}`)).status, 404);
      assert.equal(
        (await getPage(server, owner, `${usersOf(tenantA.clientId)}/${theirs}/erase`)).status,
        404,
      );
      const erase = await postForm(server, owner, `${usersOf(tenantA.clientId)}/${theirs}/erase`, {
        confirm: 'erase',
        csrf_token: token,
      });
      assert.equal(erase.status, 404);
      const find = await postForm(server, owner, `${usersOf(tenantA.clientId)}/find`, {
        email: 'theirs@people.example',
        csrf_token: token,
      });
      assert.equal(find.status, 404, 'a user of another tenant is not found by its address either');
      for (const path of [
        usersOf(tenantB.clientId),
        `${usersOf(tenantB.clientId)}/${theirs}`,
        `/console/clients/${tenantB.clientId}/apps`,
      ])
        assert.equal((await getPage(server, owner, path)).status, 404, path);
      const across = await postForm(server, owner, `${usersOf(tenantB.clientId)}/${theirs}/erase`, {
        confirm: 'erase',
        csrf_token: token,
      });
      assert.equal(across.status, 404);
      assert.ok(
        await server.database.db
          .selectFrom('users')
          .select('user_id')
          .where('user_id', '=', theirs)
          .executeTakeFirst(),
      );
    });

    test('the apps page shows the registrations, no secret; only an owner gets the forms', async () => {
      const cipher = createFieldCipher(fixedKeyRing(server.masterKey));
      const app = await createClient(server.database.db, {
        name: 'Library app',
        parentId: tenantA.clientId,
        redirectUris: ['https://library.example/cb'],
        postLogoutRedirectUris: ['https://library.example/bye'],
        grantTypes: ['refresh_token'],
      });
      await setClientSettings(server.database.db, cipher, app.client_id, { dpopBound: true });
      const other = await createClient(server.database.db, { name: 'Shop app', parentId: tenantB.clientId });
      for (const cookie of [owner, auditor]) {
        const page = await getPage(server, cookie, `/console/clients/${tenantA.clientId}/apps`);
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.match(html, /Library app/);
        assert.match(html, /https:\/\/library\.example\/cb/);
        assert.match(html, /https:\/\/library\.example\/bye/);
        assert.match(html, /authorization_code, refresh_token/);
        assert.equal(
          html.includes(`/apps/${app.client_id}/rotate`),
          cookie === owner,
          'an owner may rotate the secret',
        );
        assert.doesNotMatch(html, /Shop app/);
        assert.ok(!html.includes(app.client_secret!), 'no secret on the page');
        if (cookie === auditor) assert.doesNotMatch(html, /<form[^>]*method="post"[^>]*apps/);
      }
      assert.ok(other.client_id > 0);
    });
  });
}
