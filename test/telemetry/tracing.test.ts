import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { fastBbs } from '../../src/bbs/index.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { ConfigError } from '../../src/config/config.ts';
import { tracesProtocol } from '../../src/config/traces-protocol.ts';
import { openDatabase } from '../../src/db/database.ts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import { tracingRequested } from '../../src/telemetry/tracing.ts';
import { BENCH_CONTEXT, BENCH_CONTEXT_URL, createBenchIssuer } from '../helpers/credential-factory.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { freePort } from '../helpers/free-port.ts';
import { processEnv, startServerProcess } from '../helpers/server-process.ts';
import { startOtlpReceiver } from './otlp-receiver.ts';

/**
 * Traces (issue 42): a Coffer process started with the standard OTEL_* variables exports its spans
 * over OTLP/HTTP to a receiver started here — a server span per route, database statements and
 * crypto-worker jobs under it, the caller's trace continued — and nothing in them names a person,
 * a claim or a secret. Without the variables nothing is sent.
 */
describe('tracing switch', () => {
  test('only an OTLP endpoint turns tracing on, and the standard switches turn it off', () => {
    assert.equal(tracingRequested({}), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/v1/traces' }), true);
    assert.equal(
      tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
      false,
    );
    assert.equal(
      tracingRequested({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_TRACES_EXPORTER: 'none',
      }),
      false,
    );
  });

  test('traces go as OTLP protobuf unless a protocol variable says JSON; gRPC is refused at start', () => {
    assert.equal(tracesProtocol({}), 'http/protobuf');
    assert.equal(tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), 'http/json');
    assert.equal(
      tracesProtocol({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
      'http/protobuf',
      'the traces variable wins over the general one',
    );
    for (const [variable, value] of [
      ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
      ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'http/xml'],
    ] as const)
      assert.throws(
        () => tracesProtocol({ [variable]: value }),
        (error) =>
          error instanceof ConfigError && error.variable === variable && error.message.includes(value),
      );
  });
});

for (const kind of DATABASE_KINDS) {
  describe(`traces on ${kind}`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('routes, statements and crypto jobs reach an OTLP receiver, without personal data', async () => {
      const receiver = await startOtlpReceiver();
      cleanups.push(() => receiver.close());
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const env = await processEnv(database, {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'coffer-under-test',
      });
      const server = await startServerProcess(env);
      cleanups.push(() => server.kill('SIGTERM'));
      const handle = openDatabase({
        databaseUrl: database.databaseUrl,
        dataDir: database.dataDir,
        poolSize: 1,
      });
      cleanups.push(() => handle.close());
      const { api_token: token, client_id: clientId } = await createClient(handle.db, {
        name: 'Traced master',
        master: true,
      });
      await registerContext(handle.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));

      const email = 'traced.person@telemetry.example';
      const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
      const callerSpan = '0123456789abcdef';
      const created = await fetch(`${server.url}/v1/user/create`, {
        method: 'POST',
        headers: {
          'x-api-token': token,
          'content-type': 'application/json',
          traceparent: `00-${traceId}-${callerSpan}-01`,
        },
        body: JSON.stringify({
          profile: { email_address: email, first_name: 'Tracy', last_name: 'Spanner' },
        }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const { user_id: userId } = ((await created.json()) as { data: { user_id: number } }).data;
      const { did } = await handle.db
        .selectFrom('users')
        .select(['did'])
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      const vc = await (await createBenchIssuer(fastBbs)).issue(did, 10);
      const stored = await fetch(`${server.url}/v1/vc/issuer/store`, {
        method: 'POST',
        headers: { 'x-api-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ vc }),
      });
      assert.equal(stored.status, 201, await stored.clone().text());

      // The caller's trace goes on: the server span is the child of the caller's span.
      const route = await receiver.waitFor((s) => s.name === 'POST /v1/user/create');
      assert.equal(route.traceId, traceId);
      assert.equal(route.parentSpanId, callerSpan);
      assert.equal(route.kind, 2, 'a server span');
      assert.equal(route.attributes['http.route'], '/v1/user/create');
      assert.equal(route.attributes['http.response.status_code'], 201);
      assert.equal(route.attributes['coffer.client_id'], clientId);

      // Statements run for that request are its children, named by operation and table only.
      const statement = await receiver.waitFor(
        (s) => s.traceId === traceId && 'db.system.name' in s.attributes,
      );
      assert.equal(statement.attributes['db.system.name'], kind === 'sqlite' ? 'sqlite' : 'postgresql');
      assert.match(
        String(statement.attributes['db.query.summary']),
        /^(SELECT|INSERT|UPDATE|DELETE|BEGIN|COMMIT|PRAGMA|SET)\b/,
      );

      // The store's proof check ran in a crypto worker, inside the store's trace.
      const store = await receiver.waitFor((s) => s.name === 'POST /v1/vc/issuer/store');
      const job = await receiver.waitFor((s) => s.name.startsWith('bbs-2023 '));
      assert.equal(job.traceId, store.traceId);

      // Nothing a person or a client handed over left the process in a span.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const exported = receiver.bodies.join('\n');
      const claims = Object.entries(vc['credentialSubject'] as Record<string, string>)
        .filter(([name]) => name !== 'id')
        .map(([, value]) => value);
      for (const secret of [email, 'Tracy', 'Spanner', token, did, ...claims])
        assert.ok(!exported.includes(secret), `an exported span holds ${secret}`);
      assert.match(exported, /coffer-under-test/);
      // No protocol variable: protobuf, the specification's default.
      assert.deepEqual(new Set(receiver.contentTypes), new Set(['application/x-protobuf']));
    });

    test('OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends the same spans as JSON', async () => {
      const receiver = await startOtlpReceiver();
      cleanups.push(() => receiver.close());
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const server = await startServerProcess(
        await processEnv(database, {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '50',
        }),
      );
      cleanups.push(() => server.kill('SIGTERM'));
      const answer = await fetch(`${server.url}/.well-known/openid-configuration`);
      assert.equal(answer.status, 200);
      const route = await receiver.waitFor((s) => s.name === 'GET /.well-known/openid-configuration');
      assert.equal(route.kind, 2, 'a server span');
      assert.match(route.traceId, /^[0-9a-f]{32}$/);
      assert.deepEqual(new Set(receiver.contentTypes), new Set(['application/json']));
    });

    test('OTEL_EXPORTER_OTLP_PROTOCOL=grpc stops the start with a configuration error', async () => {
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const env = await processEnv(database, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      });
      const main = path.resolve(import.meta.dirname, '../../src/main.ts');
      const started = await promisify(execFile)(process.execPath, [main], {
        env: { ...process.env, ...env },
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      assert.equal(started.code, 1);
      assert.match(
        started.stderr,
        /configuration error: OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported/,
      );
    });

    test('without OTEL_* variables nothing is exported', async () => {
      const receiver = await startOtlpReceiver();
      cleanups.push(() => receiver.close());
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      // The receiver's address is known to the process only through a variable the SDK does not read.
      const server = await startServerProcess(
        await processEnv(database, { OTEL_BSP_SCHEDULE_DELAY: '50', UNRELATED_OTLP_URL: receiver.url }),
      );
      cleanups.push(() => server.kill('SIGTERM'));
      for (let i = 0; i < 5; i++) assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(receiver.bodies.length, 0);
    });

    test('a collector that is down loses the last spans, not the clean exit on SIGTERM', async () => {
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const closed = `http://127.0.0.1:${await freePort()}`;
      const server = await startServerProcess(
        await processEnv(database, { OTEL_EXPORTER_OTLP_ENDPOINT: closed, OTEL_BSP_SCHEDULE_DELAY: '60000' }),
      );
      for (let i = 0; i < 5; i++) assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      const stopping = Date.now();
      await server.kill('SIGTERM');
      assert.equal(server.child.exitCode, 0, 'a supervisor reads a failed exit as a crash');
      assert.ok(Date.now() - stopping < 8000, "gone within a supervisor's grace period");
    });
  });
}
