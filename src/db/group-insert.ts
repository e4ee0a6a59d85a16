import type { Kysely } from 'kysely';
import { createBatcher } from './batcher.ts';
import { type Dialect, isUniqueViolation } from './dialect.ts';
import type { Database } from './schema.ts';

type Outcome<R> = { value: R } | { error: unknown };

/**
 * An insert for many concurrent requests. On SQLite the inserts waiting at one turn of the event
 * loop share one transaction, so one fsync makes them all durable (group commit), and the event
 * loop, which SQLite's commit blocks, waits for that fsync once per batch instead of once per row.
 * A unique violation fails only its own insert: SQLite undoes the failing statement and keeps the
 * transaction. PostgreSQL commits concurrent transactions together by itself.
 */
export function createGroupInsert<Row, Result>(
  db: Kysely<Database>,
  dialect: Dialect,
  insert: (db: Kysely<Database>, row: Row) => Promise<Result>,
): (row: Row) => Promise<Result> {
  if (dialect === 'postgres') return (row) => insert(db, row);
  const batch = createBatcher<Row, Outcome<Result>>((rows) =>
    db.transaction().execute(async (tx) => {
      const outcomes: Outcome<Result>[] = [];
      for (const row of rows) {
        try {
          outcomes.push({ value: await insert(tx, row) });
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
