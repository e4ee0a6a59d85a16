import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Dialect } from './dialect.ts';
import { openNodeSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; SQLite in dataDir when absent. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** PostgreSQL schema to use (tests give each run its own). */
  schema?: string;
  poolSize?: number;
}

// PostgreSQL returns COUNT(*) and BIGINT as strings; Coffer's counts and ids fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openDatabase(options: DatabaseOptions): DatabaseHandle {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    });
    // An idle client's error (e.g. the server restarting) must not crash the process.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      dialect: 'postgres',
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: () => db.destroy(),
    };
  }
  mkdirSync(options.dataDir, { recursive: true });
  const database = openNodeSqlite(path.join(options.dataDir, 'coffer.sqlite'));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
