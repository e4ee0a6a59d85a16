import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer, postForm as postWalletForm, resolveRequest } from '../verifier/test-wallet.ts';
import {
  presentSdJwt,
  sdJwtQuery,
  startVerifierWorld,
  type VerifierWorld,
} from '../verifier/verifier-helpers.ts';
import { addAdmin, consoleLogin, formToken, getPage, postForm } from './console-helpers.ts';

/**
 * The console's verifier pages (issue #43): an operator asks with a form, the request's page shows
 * the QR code and link, a wallet that is not Coffer's answers, and the page shows the result with
 * every check and the disclosed claims. Roles, tenants and the page token as for every console write.
 */
for (const kind of DATABASE_KINDS) {
  describe(`the console's verifier pages, on ${kind}`, () => {
    let world: VerifierWorld;
    let other: { clientId: number; token: string };
    let operatorId: number;
    let operator: string;
    let auditor: string;
    let stranger: string;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let credential: string;

    before(async () => {
      world = await startVerifierWorld(kind);
      other = await world.addTenant('Other shop', { dnsNames: [] });
      operatorId = await addAdmin(world.server, world.clientId, { email: 'op@shop.example' }, 'operator');
      await addAdmin(world.server, world.clientId, { email: 'audit@shop.example' }, 'auditor');
      await addAdmin(world.server, other.clientId, { email: 'owner@other.example' }, 'owner');
      operator = (await consoleLogin(world.server, 'op@shop.example')).cookie;
      auditor = (await consoleLogin(world.server, 'audit@shop.example')).cookie;
      stranger = (await consoleLogin(world.server, 'owner@other.example')).cookie;
      holder = await generateKeyPair('ES256', { extractable: true });
      credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
    });
    after(() => world?.close());

    const root = () => `/console/clients/${world.clientId}/verifier`;
    // PUBLIC_URL is the TLS front's: a browser's form carries that origin.
    const submit = (cookie: string, fields: Record<string, string>) =>
      postForm(world.server, cookie, `${root()}/requests`, fields, { origin: world.front.url });
    const form = (token: string, extra: Record<string, string> = {}) => ({
      csrf_token: token,
      format: 'dc+sd-jwt',
      credential_type: PID_VCT,
      claims: 'given_name\nfamily_name',
      expires_in: '600',
      check_status: 'on',
      ...extra,
    });
    const requestCount = async () =>
      Number(
        (
          await world.server.database.db
            .selectFrom('verifier_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('an operator asks with the form, a wallet answers, and the page shows every check and the claims', async () => {
      const formPage = await getPage(world.server, operator, `${root()}/new`);
      assert.equal(formPage.status, 200);
      const html = await formPage.text();
      for (const label of ['Credential format', 'Credential type', 'Claims to ask for (optional)'])
        assert.ok(html.includes(`>${label}</label>`), label);

      const token = await formToken(world.server, operator, world.clientId);
      const made = await submit(operator, form(token));
      assert.equal(made.status, 303, await made.text());
      const path = made.headers.get('location')!;
      assert.match(path, new RegExp(`^${root()}/requests/[A-Za-z0-9_-]+$`));
      const id = path.split('/').at(-1)!;

      const open = await (await getPage(world.server, operator, path)).text();
      assert.match(open, /<svg[^>]*role="img"/);
      const link = /href="(openid4vp:\/\/[^"]+)"/.exec(open)?.[1]?.replaceAll('&amp;', '&');
      assert.ok(link, 'the openid4vp:// link is on the page');
      assert.match(open, /Waiting for a wallet/);
      const state = await getPage(world.server, operator, path, 'application/json');
      assert.deepEqual(((await state.json()) as { status: string }).status, 'created');

      // The same request the API would have made: its DCQL query, from the same service.
      const stored = JSON.parse(
        (
          await world.server.database.db
            .selectFrom('verifier_requests')
            .select('request')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).request,
      );
      const [query] = stored.dcqlQuery.credentials;
      assert.deepEqual(
        [query.id, query.format, query.meta, query.claims.map((c: { path: string[] }) => c.path)],
        ['credential', 'dc+sd-jwt', { vct_values: [PID_VCT] }, [['given_name'], ['family_name']]],
      );
      assert.equal(stored.checkStatus, true);

      const request = await resolveRequest(link);
      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      assert.equal((await answer(request, { credential: [presentation] })).status, 200);

      const done = await (await getPage(world.server, operator, path)).text();
      assert.match(done, /Verified: every check passed/);
      for (const check of ['issuer_signature', 'issuer_trusted', 'nonce', 'audience', 'sd_hash'])
        assert.match(
          done,
          new RegExp(`>${check}</td><td data-label="Outcome"><span class="ok">passed`),
          check,
        );
      assert.match(done, />Ada</);
      assert.match(done, />Lovelace</);
      assert.doesNotMatch(done, /<svg/, 'no QR code once answered');

      const list = await (await getPage(world.server, operator, root())).text();
      assert.ok(list.includes(`/requests/${id}"`));
      assert.match(list, />verified</);

      const events = await world.server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', '=', 'verifier.request_create')
        .where('client_id', '=', world.clientId)
        .execute();
      const mine = events.filter((e) => JSON.parse(e.targets).request_id === id);
      assert.equal(mine.length, 1);
      assert.equal(mine[0]!.actor, `admin:${operatorId}`);
    });

    test('a mistake comes back in the form with each field’s problem and what was typed (400, never a 500)', async () => {
      const token = await formToken(world.server, operator, world.clientId);
      const before = await requestCount();
      for (const [fields, field, problem] of [
        [{ credential_type: '' }, 'credential_type', 'is required'],
        [
          { format: 'mso_mdoc', credential_type: 'org.iso.18013.5.1.mDL', claims: 'given_name' },
          'claims',
          'namespace/element',
        ],
        [{ expires_in: '99999' }, 'expires_in', 'from 1 to 3600'],
        [{ trusted_issuers: 'not a certificate' }, 'trusted_issuers', 'neither a PEM certificate nor a DID'],
        [{ claims: 'address//street' }, 'claims', 'empty path segment'],
      ] as const) {
        const response = await submit(operator, form(token, fields));
        assert.equal(response.status, 400, JSON.stringify(fields));
        const html = await response.text();
        assert.match(html, new RegExp(`id="${field}-error">[^<]*${problem}`), JSON.stringify(fields));
        assert.match(html, new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
        assert.match(html, /role="alert"/);
      }
      const typed = await (
        await submit(operator, form(token, { credential_type: '', claims: 'mine/kept' }))
      ).text();
      assert.ok(typed.includes('>mine/kept</textarea>'), 'what was typed stays');
      assert.equal(await requestCount(), before, 'nothing was made');
    });

    test('an auditor reads the results, but the form and a request are refused (403)', async () => {
      assert.equal((await getPage(world.server, auditor, root())).status, 200);
      const list = await (await getPage(world.server, auditor, root())).text();
      assert.doesNotMatch(list, /New request/);
      const [first] = /\/requests\/[A-Za-z0-9_-]+/.exec(list) ?? [];
      assert.ok(first);
      assert.equal((await getPage(world.server, auditor, `${root()}${first}`)).status, 200);
      assert.equal((await getPage(world.server, auditor, `${root()}/new`)).status, 403);
      const before = await requestCount();
      const token = await formToken(world.server, auditor, world.clientId);
      const refused = await submit(auditor, form(token));
      assert.equal(refused.status, 403);
      assert.equal(await requestCount(), before);
    });

    test('another tenant’s administrator gets 404, and a request of another tenant is not found', async () => {
      assert.equal((await getPage(world.server, stranger, root())).status, 404);
      assert.equal((await getPage(world.server, stranger, `${root()}/new`)).status, 404);
      const token = await formToken(world.server, stranger, other.clientId);
      const before = await requestCount();
      assert.equal((await submit(stranger, form(token))).status, 404);
      assert.equal(await requestCount(), before);
      const theirs = await world.createRequest(
        { dcql_query: sdJwtQuery(PID_VCT, [['given_name']]) },
        other.token,
      );
      assert.equal(theirs.status, 201, theirs.text);
      const cross = await getPage(world.server, operator, `${root()}/requests/${theirs.body.data.id}`);
      assert.equal(cross.status, 404);
      const own = `/console/clients/${other.clientId}/verifier/requests/${theirs.body.data.id}`;
      assert.equal((await getPage(world.server, stranger, own)).status, 200);
    });

    test('a client that is not a verifier says so on the form (403), and nothing is made', async () => {
      const plain = await world.addTenant('Plain club', false);
      await addAdmin(world.server, plain.clientId, { email: 'owner@plain.example' }, 'owner');
      const owner = (await consoleLogin(world.server, 'owner@plain.example')).cookie;
      const page = await getPage(world.server, owner, `/console/clients/${plain.clientId}/verifier/new`);
      assert.equal(page.status, 403);
      assert.match(await page.text(), /coffer verifier enable/);
      assert.equal(
        (await getPage(world.server, owner, `/console/clients/${plain.clientId}/verifier`)).status,
        200,
      );
      const token = await formToken(world.server, owner, plain.clientId);
      const before = await requestCount();
      const made = await postForm(
        world.server,
        owner,
        `/console/clients/${plain.clientId}/verifier/requests`,
        form(token),
        { origin: world.front.url },
      );
      assert.equal(made.status, 403);
      assert.equal(await requestCount(), before);
    });

    test('a declined answer shows the wallet’s error; a same-device one shows its state only', async () => {
      for (const extra of [{}, { redirect_uri: 'https://shop.example/done' }]) {
        const created = await world.createRequest({
          dcql_query: sdJwtQuery(PID_VCT, [['given_name']]),
          ...extra,
        });
        assert.equal(created.status, 201, created.text);
        const request = await resolveRequest(created.body.data.authorization_request);
        const declined = await postWalletForm(request.payload.response_uri, {
          error: 'access_denied',
          state: request.payload.state,
        });
        assert.equal(declined.status, 200);
        const html = await (
          await getPage(world.server, auditor, `${root()}/requests/${created.body.data.id}`)
        ).text();
        assert.match(html, /Declined by the wallet/);
        if ('redirect_uri' in extra) {
          assert.match(html, /same-device request/);
          assert.doesNotMatch(html, /access_denied/);
        } else assert.match(html, /access_denied/);
      }
    });

    test('a request without the page token, with a forged one or from another site is refused (403)', async () => {
      const before = await requestCount();
      const token = await formToken(world.server, operator, world.clientId);
      const { csrf_token: _t, ...withoutToken } = form(token);
      assert.equal((await submit(operator, withoutToken)).status, 403);
      assert.equal((await submit(operator, form(`${token.slice(0, -2)}AA`))).status, 403);
      const tokenOfAnother = await formToken(world.server, auditor, world.clientId);
      assert.equal((await submit(operator, form(tokenOfAnother))).status, 403);
      const crossSite = await postForm(world.server, operator, `${root()}/requests`, form(token), {
        origin: 'https://evil.example',
      });
      assert.equal(crossSite.status, 403);
      assert.equal(await requestCount(), before);
    });

    test('the results are paged, newest first', async () => {
      const made: string[] = [];
      for (let i = 0; i < 26; i++) {
        const created = await world.createRequest({ dcql_query: sdJwtQuery(PID_VCT, [['given_name']]) });
        made.push(created.body.data.id);
      }
      const first = await (await getPage(world.server, operator, root())).text();
      const older = /href="([^"]+\?cursor=[^"]+)">Older requests/.exec(first)?.[1];
      assert.ok(older, 'a link to older requests');
      assert.ok(first.includes(`/requests/${made.at(-1)}"`), 'the newest is on the first page');
      const second = await (await getPage(world.server, operator, older.replaceAll('&amp;', '&'))).text();
      const ids = (text: string) => [...text.matchAll(/\/requests\/([A-Za-z0-9_-]+)"/g)].map((m) => m[1]);
      assert.equal(ids(first).length, 25);
      assert.ok(ids(second).length >= 1);
      assert.equal(ids(first).filter((id) => ids(second).includes(id)).length, 0, 'no request on both pages');
      const bad = await getPage(world.server, operator, `${root()}?cursor=nonsense`);
      assert.equal(bad.status, 400);
    });
  });
}
