import type { Kysely } from 'kysely';
import { createBatcher } from './batcher.ts';
import { type Dialect, isUniqueViolation } from './dialect.ts';
import type { Database } from './schema.ts';

type Outcome<R> = { value: R } | { error: unknown };

/**
 * A write (an insert, or a conditional update) for many concurrent requests. On SQLite the writes
 * waiting at one turn of the event loop share one transaction, so one fsync makes them all durable (group commit), and the event
 * loop, which SQLite's commit blocks, waits for that fsync once per batch instead of once per row.
 * A unique violation fails only its own write: SQLite undoes the failing statement and keeps the
 * transaction. PostgreSQL commits concurrent transactions together by itself.
 */
export function createGroupCommit<Row, Result>(
  db: Kysely<Database>,
  dialect: Dialect,
  write: (db: Kysely<Database>, row: Row) => Promise<Result>,
): (row: Row) => Promise<Result> {
  if (dialect === 'postgres') return (row) => write(db, row);
  const batch = createBatcher<Row, Outcome<Result>>((rows) =>
    db.transaction().execute(async (tx) => {
      const outcomes: Outcome<Result>[] = [];
      for (const row of rows) {
        try {
          outcomes.push({ value: await write(tx, row) });
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
          outcomes.push({ error });
        }
      }
      return outcomes;
    }),
  );
  return async (row) => {
    const outcome = await batch(row);
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}
