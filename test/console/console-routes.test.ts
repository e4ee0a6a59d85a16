import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { insertAuditEvent } from '../../src/audit/audit-events.ts';
import { hashSecret } from '../../src/keys/secrets.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { interactionView, postInteraction, signSiwe } from '../oidc/flow-helpers.ts';
import {
  addAdmin,
  consoleLogin,
  formToken,
  getPage,
  postForm,
  SUB_CLIENT_FIELDS,
} from './console-helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

for (const kind of DATABASE_KINDS) {
  describe(`the console, headless, on ${kind}`, () => {
    let server: TestServer;
    let tenantA: { clientId: number; token: string };
    let tenantB: { clientId: number; token: string };
    let ownerId: number;
    let owner: string;
    before(async () => {
      server = await startTestServer(kind);
      tenantA = await server.createMaster('University A');
      tenantB = await server.createMaster('Shop B');
      ownerId = await addAdmin(server, tenantA.clientId, { email: 'owner@a.example' }, 'owner');
      await addAdmin(server, tenantB.clientId, { email: 'owner@b.example' }, 'owner');
      owner = (await consoleLogin(server, 'owner@a.example')).cookie;
    });
    after(async () => {
      await server?.close();
    });

    const subClientCount = async (clientId: number) =>
      Number(
        (
          await server.database.db
            .selectFrom('clients')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('parent_id', '=', clientId)
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('the front page says what this Coffer is and links to what exists', async () => {
      const response = await fetch(`${server.url}/`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type')!, /text\/html/);
      assert.match(response.headers.get('content-security-policy')!, /default-src 'none'/);
      const html = await response.text();
      assert.match(html, /OpenID Provider/);
      for (const link of ['/console', '/wallet', '/docs', '/.well-known/openid-configuration'])
        assert.ok(html.includes(`href="${link}"`), link);
      for (const link of ['/docs', '/.well-known/openid-configuration'])
        assert.equal((await fetch(`${server.url}${link}`)).status, 200, link);
    });

    test('the console session is its own Strict, HttpOnly cookie of bounded life, kept only as a hash', async () => {
      const { cookie, setCookie } = await consoleLogin(server, 'owner@a.example');
      assert.match(cookie, /^coffer_console=[A-Za-z0-9_-]{43}$/);
      assert.match(setCookie, /; HttpOnly/);
      assert.match(setCookie, /; SameSite=Strict/);
      assert.match(setCookie, /; Max-Age=28800/);
      assert.doesNotMatch(setCookie, /Secure/, 'no Secure in development and tests, where http is used');
      const value = cookie.split('=')[1]!;
      const rows = await server.database.db.selectFrom('console_sessions').selectAll().execute();
      assert.ok(rows.some((r) => r.id_hash === hashSecret(value)));
      assert.ok(rows.every((r) => r.id_hash !== value));
      assert.ok(rows.every((r) => r.email_index !== 'owner@a.example'));
      // The person's own session cookie is not involved.
      const json = await getPage(server, cookie, '/console', 'application/json');
      assert.deepEqual(await json.json(), {
        clients: [{ client_id: tenantA.clientId, name: 'University A', role: 'owner' }],
      });
    });

    test('an administrator of one client goes to its overview: counts and recent events', async () => {
      const start = await getPage(server, owner, '/console');
      assert.equal(start.status, 303);
      assert.equal(start.headers.get('location'), `/console/clients/${tenantA.clientId}`);
      const overview = await getPage(server, owner, `/console/clients/${tenantA.clientId}`);
      assert.equal(overview.status, 200);
      const html = await overview.text();
      assert.match(html, /<dt>Sub-clients<\/dt>/);
      assert.match(html, /<dt>Issued credentials<\/dt>/);
      assert.match(html, /console\.login/, 'the log-in is among the recent events');
      assert.equal(overview.headers.get('cache-control'), 'no-store');
    });

    test('someone who administers no client is told so (403), as a page and as JSON', async () => {
      const { cookie } = await consoleLogin(server, 'stranger@example.org');
      const page = await getPage(server, cookie, '/console');
      assert.equal(page.status, 403);
      assert.match(await page.text(), /You administer no client here/);
      const json = await getPage(server, cookie, '/console', 'application/json');
      assert.equal(json.status, 403);
      assert.equal(((await json.json()) as Json).error, 'forbidden');
      const other = await getPage(server, cookie, `/console/clients/${tenantA.clientId}`);
      assert.equal(other.status, 404);
    });

    test('without a session a page sends the browser to log in, and a write is 401', async () => {
      const page = await getPage(server, 'coffer_console=nothing', `/console/clients/${tenantA.clientId}`);
      assert.equal(page.status, 303);
      assert.equal(page.headers.get('location'), '/console');
      const write = await postForm(server, '', `/console/clients/${tenantA.clientId}/subclients`, {
        ...SUB_CLIENT_FIELDS,
        csrf_token: 'x',
      });
      assert.equal(write.status, 401);
    });

    test('a write without the page token, with another session’s token or from another site is refused', async () => {
      const before = await subClientCount(tenantA.clientId);
      const path = `/console/clients/${tenantA.clientId}/subclients`;
      const missing = await postForm(server, owner, path, SUB_CLIENT_FIELDS);
      assert.equal(missing.status, 403);
      const other = (await consoleLogin(server, 'owner@b.example')).cookie;
      const foreignToken = await formToken(server, other, tenantB.clientId);
      const wrong = await postForm(server, owner, path, { ...SUB_CLIENT_FIELDS, csrf_token: foreignToken });
      assert.equal(wrong.status, 403);
      const token = await formToken(server, owner, tenantA.clientId);
      const crossSite = await postForm(
        server,
        owner,
        path,
        { ...SUB_CLIENT_FIELDS, csrf_token: token },
        { origin: 'https://evil.example' },
      );
      assert.equal(crossSite.status, 403);
      // The pages' no-referrer policy masks a form's Origin; only the browser's Sec-Fetch-Site vouches then.
      for (const site of ['cross-site', 'same-site']) {
        const masked = await postForm(
          server,
          owner,
          path,
          { ...SUB_CLIENT_FIELDS, csrf_token: token },
          { origin: 'null', 'sec-fetch-site': site },
        );
        assert.equal(masked.status, 403, site);
      }
      assert.equal(await subClientCount(tenantA.clientId), before);
      const sameOrigin = await postForm(
        server,
        owner,
        path,
        { ...SUB_CLIENT_FIELDS, subdomain: 'masked', csrf_token: token },
        { origin: 'null', 'sec-fetch-site': 'same-origin' },
      );
      assert.equal(sameOrigin.status, 303);
      assert.equal(await subClientCount(tenantA.clientId), before + 1);
    });

    test("an administrator of one tenant neither sees nor touches another's", async () => {
      for (const path of ['', '/audit', '/subclients']) {
        const page = await getPage(server, owner, `/console/clients/${tenantB.clientId}${path}`);
        assert.equal(page.status, 404, path);
        const html = await page.text();
        assert.doesNotMatch(html, /Shop B/);
        assert.match(html, /<a href="\/console">Back to the console<\/a>/);
      }
      const token = await formToken(server, owner, tenantA.clientId);
      const write = await postForm(server, owner, `/console/clients/${tenantB.clientId}/subclients`, {
        ...SUB_CLIENT_FIELDS,
        subdomain: 'cross',
        csrf_token: token,
      });
      assert.equal(write.status, 404);
      assert.equal(await subClientCount(tenantB.clientId), 0);
    });

    test('an owner creates a sub-client; the trail names the administrator as its actor', async () => {
      const token = await formToken(server, owner, tenantA.clientId);
      const created = await postForm(server, owner, `/console/clients/${tenantA.clientId}/subclients`, {
        ...SUB_CLIENT_FIELDS,
        csrf_token: token,
      });
      assert.equal(created.status, 303, await created.clone().text());
      const location = created.headers.get('location')!;
      assert.match(location, new RegExp(`^/console/clients/${tenantA.clientId}/subclients\\?created=\\d+$`));
      const list = await (await getPage(server, owner, location)).text();
      assert.match(list, /Faculty of Law/);
      assert.match(list, /role="status">Sub-client \d+ was created/);
      const audit = await server.request('GET', '/v1/audit?type=subclient.create', {
        headers: { 'x-api-token': tenantA.token },
      });
      assert.equal(audit.status, 200);
      assert.equal(audit.body.data[0].actor, `admin:${ownerId}`);
      const page = await (
        await getPage(server, owner, `/console/clients/${tenantA.clientId}/audit?type=subclient.create`)
      ).text();
      assert.match(page, new RegExp(`admin:${ownerId}`));
    });

    test('a form with mistakes comes back with them, and what was typed', async () => {
      const token = await formToken(server, owner, tenantA.clientId);
      const response = await postForm(server, owner, `/console/clients/${tenantA.clientId}/subclients`, {
        ...SUB_CLIENT_FIELDS,
        country: 'XX',
        subdomain: 'other',
        csrf_token: token,
      });
      assert.equal(response.status, 400);
      const html = await response.text();
      assert.match(html, /role="alert"/);
      assert.match(html, /id="country"[^>]*aria-invalid="true"/);
      assert.match(html, /value="Faculty of Law"/);
    });

    test('an auditor reads and cannot write; an operator cannot create sub-clients', async () => {
      const auditorId = await addAdmin(server, tenantA.clientId, { email: 'auditor@a.example' }, 'auditor');
      await addAdmin(server, tenantA.clientId, { email: 'operator@a.example' }, 'operator');
      for (const email of ['auditor@a.example', 'operator@a.example']) {
        const { cookie } = await consoleLogin(server, email);
        const list = await getPage(server, cookie, `/console/clients/${tenantA.clientId}/subclients`);
        assert.equal(list.status, 200);
        assert.doesNotMatch(await list.text(), /Create a sub-client/);
        const token = await formToken(server, cookie, tenantA.clientId);
        const write = await postForm(server, cookie, `/console/clients/${tenantA.clientId}/subclients`, {
          ...SUB_CLIENT_FIELDS,
          subdomain: 'refused',
          csrf_token: token,
        });
        assert.equal(write.status, 403, email);
      }
      const audit = await getPage(
        server,
        (await consoleLogin(server, 'auditor@a.example')).cookie,
        `/console/clients/${tenantA.clientId}/audit`,
      );
      assert.equal(audit.status, 200);
      assert.ok(auditorId > 0);
    });

    test('the audit page filters by type and time and pages by cursor', async () => {
      const base = `/console/clients/${tenantA.clientId}/audit`;
      const all = await (await getPage(server, owner, base)).text();
      assert.match(all, /console\.login/);
      const future = await (await getPage(server, owner, `${base}?since=2999-01-01T00:00`)).text();
      assert.match(future, /No events yet/);
      const bad = await getPage(server, owner, `${base}?cursor=nonsense`);
      assert.equal(bad.status, 400);
      for (let i = 0; i < 55; i++)
        await insertAuditEvent(server.database.db, {
          clientId: tenantA.clientId,
          actor: 'cli',
          type: 'paging.test',
          targets: { n: i },
        });
      const first = await (await getPage(server, owner, `${base}?type=paging.test`)).text();
      assert.equal(first.match(/<td data-label="Event">paging\.test<\/td>/g)?.length, 50);
      const next = first.match(/<a href="([^"]+)">Older events<\/a>/);
      assert.ok(next, 'a link to the next page');
      const second = await (await getPage(server, owner, next[1]!.replaceAll('&amp;', '&'))).text();
      assert.equal(second.match(/<td data-label="Event">paging\.test<\/td>/g)?.length, 5);
      assert.match(second, /n 4</);
      assert.doesNotMatch(second, /Older events/);
    });

    test('an administrator of several clients picks one', async () => {
      await addAdmin(server, tenantB.clientId, { email: 'both@example.org' }, 'auditor');
      await addAdmin(server, tenantA.clientId, { email: 'both@example.org' }, 'operator');
      const { cookie } = await consoleLogin(server, 'both@example.org');
      const page = await getPage(server, cookie, '/console');
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /Choose a client/);
      assert.ok(html.includes(`href="/console/clients/${tenantA.clientId}"`));
      assert.ok(html.includes(`href="/console/clients/${tenantB.clientId}"`));
    });

    test("an owner edits a sub-client; an auditor only reads it; another tenant's is not found", async () => {
      const subId = (
        await server.database.db
          .selectFrom('clients')
          .select('client_id')
          .where('subdomain', '=', 'law')
          .executeTakeFirstOrThrow()
      ).client_id;
      const listHtml = await (
        await getPage(server, owner, `/console/clients/${tenantA.clientId}/subclients`)
      ).text();
      assert.ok(listHtml.includes(`href="/console/clients/${tenantA.clientId}/subclients/${subId}"`));
      const path = `/console/clients/${tenantA.clientId}/subclients/${subId}`;
      const form = await (await getPage(server, owner, path)).text();
      assert.match(form, /id="name"[^>]*value="Faculty of Law"/);
      const token = await formToken(server, owner, tenantA.clientId);
      const saved = await postForm(server, owner, path, {
        ...SUB_CLIENT_FIELDS,
        name: 'Faculty of Laws',
        csrf_token: token,
      });
      assert.equal(saved.status, 303);
      assert.equal(saved.headers.get('location'), `${path}?updated=1`);
      const after = await (await getPage(server, owner, `${path}?updated=1`)).text();
      assert.match(after, /role="status">The sub-client was saved/);
      assert.match(after, /value="Faculty of Laws"/);
      const audit = await server.request('GET', '/v1/audit?type=subclient.update', {
        headers: { 'x-api-token': tenantA.token },
      });
      assert.equal(audit.body.data[0].actor, `admin:${ownerId}`);
      assert.deepEqual(audit.body.data[0].targets, { subclient_id: subId });

      const bad = await postForm(server, owner, path, {
        ...SUB_CLIENT_FIELDS,
        timezone: 'Mars/Olympus',
        csrf_token: token,
      });
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /id="timezone"[^>]*aria-invalid="true"/);

      const auditor = (await consoleLogin(server, 'auditor@a.example')).cookie;
      const readOnly = await (await getPage(server, auditor, path)).text();
      assert.doesNotMatch(readOnly, /<form class="fields"/);
      assert.match(readOnly, /<dd>Faculty of Laws<\/dd>/);
      const refused = await postForm(server, auditor, path, {
        ...SUB_CLIENT_FIELDS,
        csrf_token: await formToken(server, auditor, tenantA.clientId),
      });
      assert.equal(refused.status, 403);

      const other = (await consoleLogin(server, 'owner@b.example')).cookie;
      const foreign = await getPage(
        server,
        other,
        `/console/clients/${tenantB.clientId}/subclients/${subId}`,
      );
      assert.equal(foreign.status, 404);
      const foreignWrite = await postForm(
        server,
        other,
        `/console/clients/${tenantB.clientId}/subclients/${subId}`,
        {
          ...SUB_CLIENT_FIELDS,
          name: 'Taken over',
          csrf_token: await formToken(server, other, tenantB.clientId),
        },
      );
      assert.equal(foreignWrite.status, 404);
      assert.match(await (await getPage(server, owner, path)).text(), /value="Faculty of Laws"/);
    });

    test('an administrator named by a wallet logs in with Sign-In with Ethereum', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const adminId = await addAdmin(server, tenantB.clientId, { wallet: account.address }, 'operator');
      const start = await fetch(`${server.url}/console`, { redirect: 'manual' });
      const path = start.headers.get('location')!;
      const view = await interactionView(server, path);
      assert.equal(view.body.kind, 'console');
      const login = await postInteraction(
        server,
        path,
        'login/wallet',
        await signSiwe(account, view.body.siwe),
      );
      assert.equal(login.status, 200, JSON.stringify(login.body));
      const cookie = login.cookie!.split(';')[0]!;
      assert.match(cookie, /^coffer_console=/);
      const overview = await getPage(server, cookie, `/console/clients/${tenantB.clientId}`);
      assert.equal(overview.status, 200);
      assert.match(await overview.text(), /you are operator/);
      const events = await server.database.db
        .selectFrom('audit_events')
        .select(['actor', 'targets'])
        .where('event_type', '=', 'console.login')
        .where('client_id', '=', tenantB.clientId)
        .execute();
      assert.ok(
        events.some((e) => e.actor === `admin:${adminId}` && JSON.parse(e.targets).method === 'wallet'),
      );
    });

    test('a session past its lifetime is refused; JSON callers get 401 rather than the log-in', async () => {
      const { cookie } = await consoleLogin(server, 'owner@a.example');
      const json = await getPage(
        server,
        'coffer_console=unknown',
        `/console/clients/${tenantA.clientId}`,
        'application/json',
      );
      assert.equal(json.status, 401);
      assert.equal(((await json.json()) as Json).error, 'unauthorized');
      await server.database.db
        .updateTable('console_sessions')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id_hash', '=', hashSecret(cookie.split('=')[1]!))
        .execute();
      const expired = await getPage(server, cookie, `/console/clients/${tenantA.clientId}`);
      assert.equal(expired.status, 303);
      assert.equal(expired.headers.get('location'), '/console');
    });

    test('signing out ends the session on the server and expires the cookie', async () => {
      const { cookie } = await consoleLogin(server, 'owner@a.example');
      const token = await formToken(server, cookie, tenantA.clientId);
      const out = await postForm(server, cookie, '/console/sign-out', { csrf_token: token });
      assert.equal(out.status, 303);
      assert.equal(out.headers.get('location'), '/console/signed-out');
      assert.match(
        out.headers.get('set-cookie')!,
        /^coffer_console=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/,
      );
      const after = await getPage(server, cookie, `/console/clients/${tenantA.clientId}`);
      assert.equal(after.status, 303);
    });
  });
}
