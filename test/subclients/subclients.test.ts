import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, setClientSettings } from '../../src/clients/client-admin.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { leaksInternals, startTestServer, type TestServer } from '../helpers/server.ts';

const valid = {
  name: 'Acme Shop',
  address_1: '1 High Street',
  address_2: 'Floor 2',
  country: 'GB',
  province: 'GB-ENG',
  city: 'London',
  timezone: 'Europe/London',
  domain: 'shop.acme.example',
  subdomain: 'acme',
};

let counter = 0;
const unique = (overrides: Record<string, unknown> = {}) => ({
  ...valid,
  subdomain: `tenant-${++counter}`,
  ...overrides,
});

for (const kind of DATABASE_KINDS) {
  describe(`sub-clients on ${kind}`, () => {
    let server: TestServer;
    let master: { clientId: number; token: string };
    let otherMaster: { clientId: number; token: string };
    const as = (token: string, extra: Record<string, string> = {}) => ({ 'x-api-token': token, ...extra });

    before(async () => {
      server = await startTestServer(kind);
      master = await server.createMaster('Master A');
      otherMaster = await server.createMaster('Master B');
    });
    after(async () => {
      // No response of the whole suite may show a stack trace, SQL or source path.
      for (const body of server.bodies) assert.equal(leaksInternals(body), false, body);
      await server.close();
    });

    test('a master creates a sub-client and reads it back', async () => {
      const created = await server.request('POST', '/v1/sub_client', {
        headers: as(master.token),
        body: unique(),
      });
      assert.equal(created.status, 201);
      const data = created.body.data;
      assert.equal(typeof data.client_id, 'number');
      assert.equal(data.name, 'Acme Shop');
      assert.equal(data.country, 'GB');
      assert.equal(data.province, 'GB-ENG');
      assert.equal(data.esp_token, '');
      assert.equal(data.recaptcha_enabled, false);
      assert.match(data.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      const read = await server.request('GET', `/v1/sub_client/${data.client_id}`, {
        headers: as(master.token),
      });
      assert.equal(read.status, 200);
      assert.deepEqual(read.body.data, data);
    });

    test('input is normalised: trimmed text, upper-case codes, lower-case DNS names', async () => {
      const r = await server.request('POST', '/v1/sub_client', {
        headers: as(master.token),
        body: unique({
          name: '  Spaced  ',
          country: 'us',
          province: 'us-ca',
          domain: 'App.Example.COM',
          subdomain: 'MiXed-Case',
        }),
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.data.name, 'Spaced');
      assert.equal(r.body.data.country, 'US');
      assert.equal(r.body.data.province, 'US-CA');
      assert.equal(r.body.data.domain, 'app.example.com');
      assert.equal(r.body.data.subdomain, 'mixed-case');
    });

    test('a country without ISO 3166-2 subdivisions takes a free-text province', async () => {
      const r = await server.request('POST', '/v1/sub_client', {
        headers: as(master.token),
        body: unique({ country: 'AQ', province: 'Ross Dependency', timezone: 'Antarctica/McMurdo' }),
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.data.province, 'Ross Dependency');
    });

    test('an update replaces the fields and keeps id and created_at', async () => {
      const created = (
        await server.request('POST', '/v1/sub_client', { headers: as(master.token), body: unique() })
      ).body.data;
      const changed = unique({ name: 'Renamed', city: 'Leeds' });
      const r = await server.request('PUT', `/v1/sub_client/${created.client_id}`, {
        headers: as(master.token),
        body: changed,
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.data.name, 'Renamed');
      assert.equal(r.body.data.city, 'Leeds');
      assert.equal(r.body.data.subdomain, changed.subdomain);
      assert.equal(r.body.data.created_at, created.created_at);
    });

    test('secrets set with the admin CLI are shown masked to their last four characters', async () => {
      const created = (
        await server.request('POST', '/v1/sub_client', { headers: as(master.token), body: unique() })
      ).body.data;
      await setClientSettings(server.database.db, createFieldCipher(server.masterKey), created.client_id, {
        espToken: 'esp-secret-value-WXYZ',
        recaptchaKey: 'recaptcha-secret-1234',
        recaptchaEnabled: true,
        recaptchaThreshold: 0.7,
        fromEmail: 'hello@acme.example',
        privacyLink: 'https://acme.example/privacy',
      });
      const r = await server.request('GET', `/v1/sub_client/${created.client_id}`, {
        headers: as(master.token),
      });
      assert.equal(r.body.data.esp_token, '••••WXYZ');
      assert.equal(r.body.data.recaptcha_key, '••••1234');
      assert.equal(r.body.data.recaptcha_enabled, true);
      assert.equal(r.body.data.recaptcha_threshold, 0.7);
      assert.equal(r.body.data.from_email_address, 'hello@acme.example');
      assert.equal(r.body.data.privacy_link, 'https://acme.example/privacy');
      assert.ok(!r.text.includes('esp-secret-value'));
    });

    describe('authentication and tenancy', () => {
      test('no token → 401 unauthorized; unknown token → 401', async () => {
        const none = await server.request('GET', '/v1/sub_client');
        assert.equal(none.status, 401);
        assert.equal(none.body.error, 'unauthorized');
        const bad = await server.request('GET', '/v1/sub_client', { headers: as('cfr_at_nope') });
        assert.equal(bad.status, 401);
        const huge = await server.request('GET', '/v1/sub_client', { headers: as('x'.repeat(5000)) });
        assert.equal(huge.status, 401);
      });

      test('a client that is not a master → 403 on every sub-client endpoint', async () => {
        const plain = await createClient(server.database.db, { name: 'Plain' });
        const headers = as(plain.api_token);
        assert.equal((await server.request('GET', '/v1/sub_client', { headers })).status, 403);
        assert.equal(
          (await server.request('POST', '/v1/sub_client', { headers, body: unique() })).status,
          403,
        );
        assert.equal((await server.request('GET', '/v1/sub_client/1', { headers })).status, 403);
        const put = await server.request('PUT', '/v1/sub_client/1', { headers, body: unique() });
        assert.equal(put.status, 403);
        assert.equal(put.body.error, 'forbidden');
      });

      test("another master's sub-client is 404 for read and update, and absent from the list", async () => {
        const mine = (
          await server.request('POST', '/v1/sub_client', { headers: as(master.token), body: unique() })
        ).body.data;
        const read = await server.request('GET', `/v1/sub_client/${mine.client_id}`, {
          headers: as(otherMaster.token),
        });
        assert.equal(read.status, 404);
        assert.equal(read.body.error, 'not_found');
        const put = await server.request('PUT', `/v1/sub_client/${mine.client_id}`, {
          headers: as(otherMaster.token),
          body: unique({ name: 'Hijacked' }),
        });
        assert.equal(put.status, 404);
        const list = await server.request('GET', '/v1/sub_client?per_page=99', {
          headers: as(otherMaster.token),
        });
        assert.ok(!list.body.data.some((s: { client_id: number }) => s.client_id === mine.client_id));
        const still = await server.request('GET', `/v1/sub_client/${mine.client_id}`, {
          headers: as(master.token),
        });
        assert.equal(still.body.data.name, mine.name);
      });

      test('x-api-subclient-id narrows list and read to that sub-client', async () => {
        const a = (
          await server.request('POST', '/v1/sub_client', { headers: as(master.token), body: unique() })
        ).body.data;
        const b = (
          await server.request('POST', '/v1/sub_client', { headers: as(master.token), body: unique() })
        ).body.data;
        const scoped = as(master.token, { 'x-api-subclient-id': String(a.client_id) });
        const list = await server.request('GET', '/v1/sub_client', { headers: scoped });
        assert.equal(list.status, 200);
        assert.deepEqual(
          list.body.data.map((s: { client_id: number }) => s.client_id),
          [a.client_id],
        );
        assert.equal(list.body.total_pages, 1);
        assert.equal(
          (await server.request('GET', `/v1/sub_client/${a.client_id}`, { headers: scoped })).status,
          200,
        );
        const other = await server.request('GET', `/v1/sub_client/${b.client_id}`, { headers: scoped });
        assert.equal(other.status, 403);
      });

      test('x-api-subclient-id naming a foreign or unknown sub-client → 403; malformed → 400', async () => {
        const theirs = (
          await server.request('POST', '/v1/sub_client', { headers: as(otherMaster.token), body: unique() })
        ).body.data;
        const foreign = as(master.token, { 'x-api-subclient-id': String(theirs.client_id) });
        assert.equal((await server.request('GET', '/v1/sub_client', { headers: foreign })).status, 403);
        assert.equal(
          (await server.request('GET', `/v1/sub_client/${theirs.client_id}`, { headers: foreign })).status,
          403,
        );
        const unknown = as(master.token, { 'x-api-subclient-id': '999999' });
        assert.equal((await server.request('GET', '/v1/sub_client', { headers: unknown })).status, 403);
        const malformed = await server.request('GET', '/v1/sub_client', {
          headers: as(master.token, { 'x-api-subclient-id': 'abc' }),
        });
        assert.equal(malformed.status, 400);
        assert.equal(malformed.body.details[0].path, '/headers/x-api-subclient-id');
      });
    });

    describe('field rules', () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['empty name', { name: '' }, '/body/name'],
        ['blank name', { name: '   ' }, '/body/name'],
        ['name over 100', { name: 'n'.repeat(101) }, '/body/name'],
        ['name with a control character', { name: 'a\u0007b' }, '/body/name'],
        ['address_1 over 100', { address_1: 'a'.repeat(101) }, '/body/address_1'],
        ['address_2 over 100', { address_2: 'a'.repeat(101) }, '/body/address_2'],
        ['city over 70', { city: 'c'.repeat(71) }, '/body/city'],
        ['empty city', { city: '' }, '/body/city'],
        ['unknown country', { country: 'XX' }, '/body/country'],
        ['alpha-3 country', { country: 'GBR' }, '/body/country'],
        ['province not of the country', { province: 'US-CA' }, '/body/province'],
        ['province not a code', { province: 'England' }, '/body/province'],
        ['unknown time zone', { timezone: 'Mars/Olympus' }, '/body/timezone'],
        ['offset instead of a zone', { timezone: '+01:00' }, '/body/timezone'],
        ['domain with a path', { domain: 'acme.example/shop' }, '/body/domain'],
        ['domain of one label', { domain: 'localhost' }, '/body/domain'],
        ['IP address as domain', { domain: '10.0.0.1' }, '/body/domain'],
        ['domain with a bad label', { domain: '-acme.example' }, '/body/domain'],
        ['subdomain with a dot', { subdomain: 'a.b' }, '/body/subdomain'],
        ['subdomain over 63', { subdomain: 's'.repeat(64) }, '/body/subdomain'],
        ['subdomain with underscore', { subdomain: 'a_b' }, '/body/subdomain'],
        ['number instead of a string', { name: 42 }, '/body/name'],
        ['unknown field', { colour: 'blue' }, '/body/colour'],
      ];
      for (const [label, override, path] of cases) {
        test(`${label} → 400 naming ${path}`, async () => {
          const r = await server.request('POST', '/v1/sub_client', {
            headers: as(master.token),
            body: unique(override),
          });
          assert.equal(r.status, 400, r.text);
          assert.equal(r.body.error, 'invalid_request');
          assert.ok(
            r.body.details.some((d: { path: string }) => d.path === path),
            `details ${JSON.stringify(r.body.details)} do not name ${path}`,
          );
        });
      }

      test('a missing required field → 400 naming it; every violation is reported', async () => {
        const { subdomain: _omit, ...rest } = unique();
        const r = await server.request('POST', '/v1/sub_client', {
          headers: as(master.token),
          body: { ...rest, country: 'XX', timezone: 'Nowhere/Else' },
        });
        assert.equal(r.status, 400);
        assert.ok(r.body.details.some((d: { path: string }) => d.path === '/body/subdomain'));
        const second = await server.request('POST', '/v1/sub_client', {
          headers: as(master.token),
          body: unique({ country: 'XX', timezone: 'Nowhere/Else' }),
        });
        const paths = second.body.details.map((d: { path: string }) => d.path);
        assert.ok(paths.includes('/body/country') && paths.includes('/body/timezone'), JSON.stringify(paths));
      });

      test('the same rules hold on update', async () => {
        const created = (
          await server.request('POST', '/v1/sub_client', { headers: as(master.token), body: unique() })
        ).body.data;
        const r = await server.request('PUT', `/v1/sub_client/${created.client_id}`, {
          headers: as(master.token),
          body: unique({ country: 'ZZ' }),
        });
        assert.equal(r.status, 400);
      });
    });

    describe('subdomain uniqueness', () => {
      test('a taken subdomain → 409, across masters and on update', async () => {
        const first = await server.request('POST', '/v1/sub_client', {
          headers: as(master.token),
          body: unique({ subdomain: 'taken' }),
        });
        assert.equal(first.status, 201);
        const again = await server.request('POST', '/v1/sub_client', {
          headers: as(otherMaster.token),
          body: unique({ subdomain: 'TAKEN' }),
        });
        assert.equal(again.status, 409);
        assert.equal(again.body.error, 'conflict');
        const other = (
          await server.request('POST', '/v1/sub_client', { headers: as(master.token), body: unique() })
        ).body.data;
        const update = await server.request('PUT', `/v1/sub_client/${other.client_id}`, {
          headers: as(master.token),
          body: unique({ subdomain: 'taken' }),
        });
        assert.equal(update.status, 409);
      });

      test('20 concurrent creates with one subdomain → exactly one 201, the rest 409', async () => {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            server.request('POST', '/v1/sub_client', {
              headers: as(i % 2 ? master.token : otherMaster.token),
              body: unique({ subdomain: 'race' }),
            }),
          ),
        );
        const statuses = results.map((r) => r.status).sort();
        assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
        assert.equal(statuses.filter((s) => s === 409).length, 19, statuses.join(','));
      });
    });

    describe('listing', () => {
      test('pages are ordered by client_id with total_pages; beyond the last page is empty', async () => {
        const lister = await server.createMaster('Lister');
        const empty = await server.request('GET', '/v1/sub_client', { headers: as(lister.token) });
        assert.deepEqual(empty.body, { data: [], per_page: 20, current_page: 1, total_pages: 0 });
        const ids: number[] = [];
        for (let i = 0; i < 7; i++) {
          ids.push(
            (await server.request('POST', '/v1/sub_client', { headers: as(lister.token), body: unique() }))
              .body.data.client_id,
          );
        }
        const page1 = await server.request('GET', '/v1/sub_client?page=1&per_page=3', {
          headers: as(lister.token),
        });
        assert.equal(page1.status, 200);
        assert.deepEqual(
          page1.body.data.map((s: { client_id: number }) => s.client_id),
          ids.slice(0, 3),
        );
        assert.equal(page1.body.per_page, 3);
        assert.equal(page1.body.current_page, 1);
        assert.equal(page1.body.total_pages, 3);
        const page3 = await server.request('GET', '/v1/sub_client?page=3&per_page=3', {
          headers: as(lister.token),
        });
        assert.deepEqual(
          page3.body.data.map((s: { client_id: number }) => s.client_id),
          ids.slice(6),
        );
        const page4 = await server.request('GET', '/v1/sub_client?page=4&per_page=3', {
          headers: as(lister.token),
        });
        assert.deepEqual(page4.body.data, []);
        assert.equal(page4.body.total_pages, 3);
        const max = await server.request('GET', '/v1/sub_client?page=1&per_page=99', {
          headers: as(lister.token),
        });
        assert.equal(max.body.data.length, 7);
      });

      test('total_pages counts sub-clients made by the admin CLI and by concurrent creates', async () => {
        const lister = await server.createMaster('Counter');
        await Promise.all(
          Array.from({ length: 12 }, () =>
            server.request('POST', '/v1/sub_client', { headers: as(lister.token), body: unique() }),
          ),
        );
        for (let i = 0; i < 3; i++)
          await createClient(server.database.db, { name: 'CLI', parentId: lister.clientId });
        const page = await server.request('GET', '/v1/sub_client?page=1&per_page=5', {
          headers: as(lister.token),
        });
        assert.equal(page.body.total_pages, 3);
        const all = await server.request('GET', '/v1/sub_client?per_page=99', { headers: as(lister.token) });
        assert.equal(all.body.data.length, 15);
      });

      for (const query of [
        'page=0',
        'per_page=0',
        'per_page=100',
        'page=-1',
        'page=abc',
        'per_page=1.5',
        'page=99999999999',
        'sort=name',
      ]) {
        test(`?${query} → 400`, async () => {
          const r = await server.request('GET', `/v1/sub_client?${query}`, { headers: as(master.token) });
          assert.equal(r.status, 400, r.text);
          assert.equal(r.body.error, 'invalid_request');
          assert.match(r.body.details[0].path, /^\/query\//);
        });
      }

      for (const id of ['0', '-3', 'abc', '1.5', '2147483648']) {
        test(`sub-client id ${id} → 400`, async () => {
          const r = await server.request('GET', `/v1/sub_client/${id}`, { headers: as(master.token) });
          assert.equal(r.status, 400, r.text);
          assert.equal(r.body.details[0].path, '/path/subclient_id');
          const put = await server.request('PUT', `/v1/sub_client/${id}`, {
            headers: as(master.token),
            body: unique(),
          });
          assert.equal(put.status, 400);
        });
      }

      test('an unknown id of the right shape → 404', async () => {
        const r = await server.request('GET', '/v1/sub_client/2147483647', { headers: as(master.token) });
        assert.equal(r.status, 404);
      });
    });

    describe('bodies', () => {
      test('a body over the limit → 413 payload_too_large', async () => {
        const r = await server.request('POST', '/v1/sub_client', {
          headers: as(master.token),
          body: unique({ name: 'x'.repeat(300 * 1024) }),
        });
        assert.equal(r.status, 413);
        assert.equal(r.body.error, 'payload_too_large');
      });

      test('a non-JSON body → 415 unsupported_media_type', async () => {
        for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
          const r = await server.request('POST', '/v1/sub_client', {
            headers: as(master.token, { 'content-type': type }),
            body: 'name=acme',
          });
          assert.equal(r.status, 415, type);
          assert.equal(r.body.error, 'unsupported_media_type');
        }
      });

      test('malformed JSON, an empty body, an array and prototype poisoning → 400', async () => {
        for (const body of ['{"name": ', '', '[]', '{"__proto__": {"x": 1}}', 'null']) {
          const r = await server.request('POST', '/v1/sub_client', {
            headers: as(master.token, { 'content-type': 'application/json' }),
            body,
          });
          assert.equal(r.status, 400, `${JSON.stringify(body)} → ${r.status} ${r.text}`);
          assert.equal(r.body.error, 'invalid_request');
          assert.equal(typeof r.body.error_description, 'string');
        }
      });

      test('an unknown route → 404 with the error body', async () => {
        const r = await server.request('GET', '/v1/nothing-here', { headers: as(master.token) });
        assert.equal(r.status, 404);
        assert.equal(r.body.error, 'not_found');
        const wrongMethod = await server.request('DELETE', '/v1/sub_client/1', { headers: as(master.token) });
        assert.equal(wrongMethod.status, 404);
      });
    });
  });
}
