import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { readConfig } from '../../src/config/config.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { OutboundClient } from '../../src/http/outbound.ts';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './databases.ts';
import { freePort } from './free-port.ts';

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  body: any;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as is. */
  body?: unknown;
}

export interface TestServer {
  app: FastifyInstance;
  url: string;
  database: DatabaseHandle;
  testDatabase: TestDatabase;
  masterKey: Buffer;
  env: Record<string, string>;
  /** The outbound client it was started with, which a second instance of it uses too. */
  outbound: OutboundClient | undefined;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** A master client made the way the CLI makes one; returns its id and API token. */
  createMaster(name?: string): Promise<{ clientId: number; token: string }>;
  /** Every response body this server sent, for assertions that hold across a whole test. */
  bodies: string[];
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** How the wallet reaches verifiers, e.g. an outbound client that trusts a test verifier's CA. */
  outbound?: OutboundClient;
  /** The credential issuer's clock, for tests of expiry. */
  issuerClock?: () => Date;
  /**
   * A database (and the master key of what is sealed in it) to start over instead of a fresh
   * one, e.g. rows written at an earlier migration: the server migrates it as an upgrade would.
   */
  existing?: { testDatabase: TestDatabase; masterKey: Buffer };
}

/** A real Coffer server on 127.0.0.1 (random port) over a fresh database of the given kind. */
export async function startTestServer(
  kind: DatabaseKind,
  extraEnv: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const testDatabase = options.existing?.testDatabase ?? (await createTestDatabase(kind));
  const masterKey = options.existing?.masterKey ?? randomBytes(32);
  const port = await freePort();
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: testDatabase.dataDir,
    LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'silent',
    MASTER_KEY: masterKey.toString('base64'),
    API_RATE_LIMIT: '0',
    ...(testDatabase.databaseUrl ? { DATABASE_URL: testDatabase.databaseUrl } : {}),
    ...extraEnv,
  };
  const config = readConfig(env);
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    schema: testDatabase.schema,
  });
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp({
    config,
    database,
    masterKey,
    ...(options.outbound ? { outbound: options.outbound } : {}),
    ...(options.issuerClock ? { issuerClock: options.issuerClock } : {}),
  });
  await app.listen({ host: '127.0.0.1', port });
  const url = `http://127.0.0.1:${port}`;
  const bodies: string[] = [];

  return {
    app,
    url,
    database,
    testDatabase,
    masterKey,
    env,
    outbound: options.outbound,
    bodies,
    request: (method, path, options) => requestAt(url, bodies, method, path, options),
    async createMaster(name = 'Master') {
      const created = await createClient(database.db, { name, master: true });
      return { clientId: created.client_id, token: created.api_token };
    },
    async close() {
      await app.close();
      await database.close();
      await testDatabase.drop();
    },
  };
}

/** A second instance of a test server: its own process state over the same database, blocks and key. */
export interface SecondInstance {
  app: FastifyInstance;
  url: string;
  request: TestServer['request'];
  close(): Promise<void>;
}

export async function startSecondInstance(server: TestServer): Promise<SecondInstance> {
  const port = await freePort();
  const config = readConfig({ ...server.env, PORT: String(port) });
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: server.testDatabase.dataDir,
    schema: server.testDatabase.schema,
  });
  const app = await buildApp({
    config,
    database,
    masterKey: server.masterKey,
    ...(server.outbound ? { outbound: server.outbound } : {}),
  });
  await app.listen({ host: '127.0.0.1', port });
  const url = `http://127.0.0.1:${port}`;
  return {
    app,
    url,
    request: (method, path, options) => requestAt(url, server.bodies, method, path, options),
    async close() {
      await app.close();
      await database.close();
    },
  };
}

async function requestAt(
  url: string,
  bodies: string[],
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (typeof options.body === 'string') body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url + path, { method, headers, body });
  const text = await response.text();
  bodies.push(text);
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/** A stack trace, an SQL statement or a source path in a body would leak internals. */
export function leaksInternals(body: string): boolean {
  return /\bat .+\(.+:\d+:\d+\)|\bat file:|node_modules|\.ts:\d+|\bSELECT\b.+\bFROM\b|\bINSERT INTO\b|SQLITE_|duplicate key/i.test(
    body,
  );
}
