import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

type Parameters = ReadonlyArray<unknown>;

/**
 * Adapts `node:sqlite` to the synchronous database interface that Kysely's SqliteDialect drives
 * (the better-sqlite3 shape). Prepared statements are cached by SQL text: Kysely compiles the
 * same few query shapes again and again, and preparing is the costly part of a small query.
 */
export function openNodeSqlite(file: string): SqliteDatabase & { raw: DatabaseSync } {
  const db = new DatabaseSync(file);
  // WAL with synchronous=FULL: a committed transaction survives power loss, readers never block the writer.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA busy_timeout = 5000');

  const cache = new Map<string, SqliteStatement>();
  const MAX_CACHED = 500;

  function wrap(statement: StatementSync): SqliteStatement {
    const reader = statement.columns().length > 0;
    return {
      reader,
      all: (parameters: Parameters) => statement.all(...(parameters as never[])),
      run: (parameters: Parameters) => statement.run(...(parameters as never[])),
      iterate: (parameters: Parameters) => statement.iterate(...(parameters as never[])),
    };
  }

  return {
    raw: db,
    close: () => {
      cache.clear();
      db.close();
    },
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = wrap(db.prepare(sql));
        if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}
