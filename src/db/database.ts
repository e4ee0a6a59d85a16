import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Dialect } from './dialect.ts';
import { openNodeSqlite } from './node-sqlite.ts';
import { registerRelaxedSession } from './relaxed-session.ts';
import type { Database } from './schema.ts';
import { withStatementTracing } from './statement-tracing.ts';

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
    // Settings given in the URL (?options=-c …) and Coffer's own go together: pg lets the URL's
    // options replace a pool's, so they are taken out of the URL and joined.
    const url = new URL(options.databaseUrl);
    const urlSettings = url.searchParams.get('options');
    url.searchParams.delete('options');
    const openPool = (max: number, settings: string[]) => {
      const all = [...(urlSettings ? [urlSettings] : []), ...settings];
      const pool = new pg.Pool({
        connectionString: url.toString(),
        max,
        ...(all.length ? { options: all.join(' ') } : {}),
      });
      // An idle client's error (e.g. the server restarting) must not crash the process.
      pool.on('error', () => {});
      return new Kysely<Database>({
        dialect: withStatementTracing(new PostgresDialect({ pool }), 'postgresql'),
      });
    };
    const searchPath = options.schema ? [`-c search_path=${options.schema}`] : [];
    const poolSize = options.poolSize ?? 10;
    const db = openPool(poolSize, searchPath);
    // Relaxed commits (db/relaxed-session.ts) on their own, smaller pool.
    const relaxed = openPool(Math.max(2, Math.ceil(poolSize / 4)), [
      ...searchPath,
      '-c synchronous_commit=off',
    ]);
    registerRelaxedSession(db, relaxed);
    return {
      db,
      dialect: 'postgres',
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: async () => {
        await relaxed.destroy();
        await db.destroy();
      },
    };
  }
  mkdirSync(options.dataDir, { recursive: true });
  const database = openNodeSqlite(path.join(options.dataDir, 'coffer.sqlite'));
  const db = new Kysely<Database>({
    dialect: withStatementTracing(new SqliteDialect({ database }), 'sqlite'),
  });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
