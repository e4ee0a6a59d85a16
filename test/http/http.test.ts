import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { curveChoice } from '../../src/bbs/curve.ts';
import { readConfig } from '../../src/config/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { leaksInternals, startTestServer, type TestServer } from '../helpers/server.ts';

describe('operations endpoints', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server.close());

  test('GET /healthz and /readyz answer ok while the database is reachable', async () => {
    assert.deepEqual((await server.request('GET', '/healthz')).body, { status: 'ok' });
    const ready = await server.request('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.checks.database, 'ok');
  });

  test('GET /openapi.json is OpenAPI 3.1 describing the sub-client endpoints with their schemas', async () => {
    const r = await server.request('GET', '/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.1.0');
    const paths = r.body.paths;
    assert.ok(paths['/v1/sub_client'].post && paths['/v1/sub_client'].get);
    assert.ok(paths['/v1/sub_client/{subclient_id}'].put && paths['/v1/sub_client/{subclient_id}'].get);
    const body = paths['/v1/sub_client'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required.sort(), [
      'address_1',
      'city',
      'country',
      'domain',
      'name',
      'province',
      'subdomain',
      'timezone',
    ]);
    assert.ok(paths['/v1/sub_client'].post.responses['409']);
    assert.ok(r.body.components.securitySchemes.apiToken);
  });

  test('errors of the HTTP layer itself answer with the error body: deep JSON, long path parameters, huge headers', async () => {
    const { token } = await server.createMaster('Layers');
    const deep = `{"name":${'['.repeat(65)}${']'.repeat(65)}}`;
    const nested = await server.request('POST', '/v1/sub_client', {
      headers: { 'x-api-token': token, 'content-type': 'application/json' },
      body: deep,
    });
    assert.equal(nested.status, 400);
    assert.deepEqual(nested.body, {
      error: 'invalid_request',
      error_description: 'The request body nests deeper than 64 levels.',
    });
    const shallow = `{"name":${'['.repeat(60)}${']'.repeat(60)}}`;
    const ok = await server.request('POST', '/v1/sub_client', {
      headers: { 'x-api-token': token, 'content-type': 'application/json' },
      body: shallow,
    });
    assert.equal(ok.status, 400);
    assert.ok(
      ok.body.details.some((d: { path: string }) => d.path === '/body/name'),
      'a shallower body reaches validation',
    );

    const long = await server.request('GET', `/v1/sub_client/${'9'.repeat(500)}`, {
      headers: { 'x-api-token': token },
    });
    assert.equal(long.status, 400);
    assert.equal(long.body.error, 'invalid_request');

    const huge = await fetch(`${server.url}/healthz`, { headers: { 'x-filler': 'a'.repeat(40_000) } });
    assert.equal(huge.status, 431);
    assert.deepEqual(await huge.json(), {
      error: 'invalid_request',
      error_description: 'The request headers are larger than allowed.',
    });
  });

  test('GET /docs serves the reference page', async () => {
    const r = await fetch(`${server.url}/docs/`, { redirect: 'follow' });
    assert.equal(r.status, 200);
    assert.match(await r.text(), /<html/i);
  });

  test('GET /metrics exposes Prometheus counters by route', async () => {
    await server.request('GET', '/healthz');
    const r = await fetch(`${server.url}/metrics`);
    const text = await r.text();
    assert.match(text, /coffer_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  });

  test('GET /metrics names the curve backend BBS runs on', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(text, new RegExp(`^coffer_bbs_backend\\{backend="${curveChoice.name}"\\} 1$`, 'm'));
  });

  test('every response carries a request id and protective headers', async () => {
    const r = await server.request('GET', '/healthz');
    assert.match(r.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
    assert.match(r.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  });
});

describe('errors that reach no handler', () => {
  test('an unexpected failure → 500 server_error with the request id, and no internals', async () => {
    const testDatabase = await createTestDatabase('sqlite');
    const config = readConfig({ DATA_DIR: testDatabase.dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'test' });
    const database = openDatabase({ databaseUrl: undefined, dataDir: testDatabase.dataDir });
    await migrateToLatest(database.db, database.dialect);
    const app = await buildApp({ config, database, masterKey: randomBytes(32) });
    app.get('/__boom', async () => {
      throw new Error('SELECT secret FROM internals at /src/secret.ts:12:3');
    });
    const r = await app.inject({ method: 'GET', url: '/__boom' });
    assert.equal(r.statusCode, 500);
    const body = r.json();
    assert.equal(body.error, 'server_error');
    assert.equal(body.request_id, r.headers['x-request-id']);
    assert.equal(leaksInternals(r.body), false, r.body);
    assert.ok(!r.body.includes('secret'));
    await app.close();
    await database.close();
    await testDatabase.drop();
  });

  test('a broken database makes /readyz answer 503', async () => {
    const server = await startTestServer('sqlite');
    await server.database.close();
    const r = await server.request('GET', '/readyz');
    assert.equal(r.status, 503);
    assert.equal(r.body.checks.database, 'unreachable');
    await server.app.close();
    await server.testDatabase.drop();
  });
});

describe('rate limits', () => {
  test('past API_RATE_LIMIT requests a minute → 429 rate_limited with Retry-After', async () => {
    const server = await startTestServer('sqlite', { API_RATE_LIMIT: '5' });
    const master = await server.createMaster();
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<TestServer['request']>> | undefined;
    for (let i = 0; i < 7; i++) {
      const r = await server.request('GET', '/v1/sub_client', { headers: { 'x-api-token': master.token } });
      statuses.push(r.status);
      if (r.status === 429) limited = r;
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    assert.equal(limited?.body.error, 'rate_limited');
    assert.match(limited?.headers.get('retry-after') ?? '', /^\d+$/);
    // Another token has its own budget; health checks are never limited.
    const other = await server.createMaster('Other');
    assert.equal(
      (await server.request('GET', '/v1/sub_client', { headers: { 'x-api-token': other.token } })).status,
      200,
    );
    for (let i = 0; i < 8; i++) assert.equal((await server.request('GET', '/healthz')).status, 200);
    await server.close();
  });
});

describe('logs', () => {
  test('request logs carry the request id and never an API token', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const testDatabase = await createTestDatabase('sqlite');
    const config = readConfig({ DATA_DIR: testDatabase.dataDir, LOG_LEVEL: 'info', NODE_ENV: 'test' });
    const database = openDatabase({ databaseUrl: undefined, dataDir: testDatabase.dataDir });
    await migrateToLatest(database.db, database.dialect);
    const app = await buildApp({ config, database, masterKey: randomBytes(32), logStream: stream });
    app.get('/__log', async (request) => {
      request.log.info({ req: request, body: { client_secret: 'cfr_cs_should_not_show' } }, 'custom');
      return { ok: true };
    });
    const token = 'cfr_at_this-token-must-not-be-logged';
    const r = await app.inject({
      method: 'GET',
      url: '/__log',
      headers: { 'x-api-token': token, authorization: 'Bearer abc.def.ghi' },
    });
    await app.close();
    await database.close();
    await testDatabase.drop();
    const log = lines.join('');
    assert.ok(log.includes(String(r.headers['x-request-id'])), 'request id in the logs');
    assert.ok(!log.includes('this-token-must-not-be-logged'), log);
    assert.ok(!log.includes('abc.def.ghi'), log);
    assert.ok(!log.includes('should_not_show'), log);
    assert.ok(log.includes('[redacted]'));
  });
});
