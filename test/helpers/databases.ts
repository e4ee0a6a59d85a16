import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * The databases every database test runs against: SQLite always, PostgreSQL when
 * TEST_DATABASE_URL is set. Each test gets its own SQLite directory or PostgreSQL schema,
 * so runs never see each other's rows.
 */
export type DatabaseKind = 'sqlite' | 'postgres';

export const DATABASE_KINDS: DatabaseKind[] = process.env['TEST_DATABASE_URL']
  ? ['sqlite', 'postgres']
  : ['sqlite'];

export interface TestDatabase {
  kind: DatabaseKind;
  dataDir: string;
  /** For PostgreSQL: a URL whose connections use the test's own schema (for child processes). */
  databaseUrl: string | undefined;
  schema: string | undefined;
  drop(): Promise<void>;
}

export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'coffer-test-'));
  if (kind === 'sqlite') {
    return {
      kind,
      dataDir,
      databaseUrl: undefined,
      schema: undefined,
      drop: () => rm(dataDir, { recursive: true, force: true }),
    };
  }
  const base = process.env['TEST_DATABASE_URL']!;
  const schema = `coffer_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind,
    dataDir,
    databaseUrl: url.toString(),
    schema,
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
