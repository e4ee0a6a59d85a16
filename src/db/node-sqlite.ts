import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

type Parameters = ReadonlyArray<unknown>;

/** Every commit waits for the disk unless a write asks otherwise (group-commit.ts, `Durability`). */
export const SQLITE_DURABLE_SYNCHRONOUS = 'FULL';

/**
 * Adapts `node:sqlite` to the synchronous database interface that Kysely's SqliteDialect drives
 * (the better-sqlite3 shape). Prepared statements are cached by SQL text: Kysely compiles the
 * same few query shapes again and again, and preparing is the costly part of a small query.
 */
export function openNodeSqlite(file: string): SqliteDatabase & { raw: DatabaseSync } {
  const db = new DatabaseSync(file);
  // WAL with synchronous=FULL: a committed transaction survives power loss, readers never block the writer.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${SQLITE_DURABLE_SYNCHRONOUS}`);
  // SQLite copies the WAL back into the database (a checkpoint, with its fsyncs) on the committing
  // thread, by default every 1,000 pages (4 MB). Every 4,000 pages instead: a page rewritten
  // many times in between is copied once, and the event loop pays for a checkpoint a quarter as
  // often (a token refresh's update, insert and commit: 47 → 37 µs in a micro-benchmark). Larger
  // intervals saved a little more but each checkpoint then stalled requests for up to 60 ms.
  // After a checkpoint the WAL file is cut back to 64 MB at most.
  db.exec('PRAGMA wal_autocheckpoint = 4000');
  db.exec(`PRAGMA journal_size_limit = ${64 * 1024 * 1024}`);
  db.exec('PRAGMA foreign_keys = ON');
  // Deleted rows are overwritten with zeros instead of lingering in free space, so an erased
  // account leaves nothing in the database file (accounts/account-erasure.ts truncates the WAL).
  db.exec('PRAGMA secure_delete = ON');
  db.exec('PRAGMA busy_timeout = 5000');

  const cache = new Map<string, SqliteStatement>();
  const MAX_CACHED = 500;

  function wrap(statement: StatementSync): SqliteStatement {
    const names = statement.columns().map((column) => column.name);
    if (names.includes('__proto__')) throw new Error('a result column must not be named __proto__');
    const reader = names.length > 0;
    // node:sqlite builds each row as a null-prototype object in dictionary mode, and every later
    // property read (Kysely, services, the response serializer) pays a hash lookup: reading a
    // 20-row page that way cost more than the query. Rows fetched as arrays and copied into
    // plain objects, always in the same key order, get one hidden class and fast reads.
    if (reader) statement.setReturnArrays(true);
    const toRow = (values: unknown[]) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
      return row;
    };
    return {
      reader,
      all: (parameters: Parameters) =>
        (statement.all(...(parameters as never[])) as unknown as unknown[][]).map(toRow),
      run: (parameters: Parameters) => statement.run(...(parameters as never[])),
      *iterate(parameters: Parameters) {
        for (const values of statement.iterate(...(parameters as never[])))
          yield toRow(values as unknown as unknown[]);
      },
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
