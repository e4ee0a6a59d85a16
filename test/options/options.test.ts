import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Ajv } from 'ajv';
import { buildOptions } from '../../src/options/options-routes.ts';
import { OptionsEnvelope } from '../../src/options/options-schemas.ts';
import { industryCodeOf } from '../../src/options/profile-options.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

test('the built lists match their response schema', () => {
  const validate = new Ajv({ strict: false }).compile(OptionsEnvelope);
  assert.ok(validate(buildOptions()), JSON.stringify(validate.errors));
});

test('NAICS sector numbers: ranges accepted under each of their numbers, codes as number or text', () => {
  assert.equal(industryCodeOf(54), 54);
  assert.equal(industryCodeOf('54'), 54);
  assert.equal(industryCodeOf(33), 31);
  assert.equal(industryCodeOf('31-33'), 31);
  assert.equal(industryCodeOf('45'), 44);
  assert.equal(industryCodeOf(49), 48);
  for (const bad of [10, 34, 99, 541, '5', '054', '31-32', ' 54'])
    assert.equal(industryCodeOf(bad), undefined, String(bad));
});

for (const kind of DATABASE_KINDS) {
  describe(`GET /v1/options on ${kind}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    test('lists every coded value set without authentication, cacheable for a day', async () => {
      const r = await server.request('GET', '/v1/options');
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('cache-control'), 'public, max-age=86400');
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      const data = r.body.data;
      assert.deepEqual(Object.keys(data).sort(), [
        'countries',
        'education',
        'employment_industry',
        'employment_status',
        'gender',
        'household_income',
        'languages',
        'marital_status',
        'provinces',
        'timezones',
      ]);
      assert.ok(
        data.countries.some(
          (c: { code: string; name: string }) => c.code === 'GB' && /United Kingdom/.test(c.name),
        ),
      );
      assert.ok(data.countries.length >= 249);
      assert.ok(data.provinces.GB.some((p: { code: string }) => p.code === 'GB-ENG'));
      assert.ok(
        data.provinces.US.some(
          (p: { code: string; name: string }) => p.code === 'US-CA' && p.name === 'California',
        ),
      );
      assert.deepEqual(
        data.languages.find((l: { code: string }) => l.code === 'en'),
        { code: 'en', name: 'English', native_name: 'English' },
      );
      assert.equal(data.languages.length, 183);
      assert.deepEqual(
        data.employment_industry.find((i: { code: number }) => i.code === 54),
        { code: 54, naics: '54', name: 'Professional, Scientific, and Technical Services' },
      );
      assert.equal(data.employment_industry.length, 20);
      assert.ok(data.timezones.includes('Europe/London'));
      for (const set of ['gender', 'marital_status', 'education', 'employment_status', 'household_income']) {
        assert.ok(data[set].length >= 3, set);
        for (const { code, name } of data[set]) {
          assert.match(code, SNAKE_CASE, `${set}: ${code}`);
          assert.ok(name.length > 0);
        }
      }
    });

    test('revalidates with the ETag and compresses when asked', async () => {
      const first = await server.request('GET', '/v1/options');
      const etag = first.headers.get('etag')!;
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
      const again = await server.request('GET', '/v1/options', { headers: { 'if-none-match': `W/${etag}` } });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
      // fetch() would decompress on its own; read the raw bytes through the app instead.
      const raw = await server.app.inject({
        method: 'GET',
        url: '/v1/options',
        headers: { 'accept-encoding': 'gzip' },
      });
      assert.equal(raw.headers['content-encoding'], 'gzip');
      assert.ok(raw.rawPayload.length < first.text.length / 3);
      assert.equal(gunzipSync(raw.rawPayload).toString(), first.text);
    });

    test('is described in /openapi.json', async () => {
      const r = await server.request('GET', '/openapi.json');
      const response = r.body.paths['/v1/options'].get.responses['200'];
      assert.ok(response.content['application/json'].schema.properties.data.properties.provinces);
    });
  });
}
