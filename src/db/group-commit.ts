import { CompiledQuery, type Kysely } from 'kysely';
import { createBatcher } from './batcher.ts';
import { type Dialect, isUniqueViolation } from './dialect.ts';
import { SQLITE_DURABLE_SYNCHRONOUS } from './node-sqlite.ts';
import { relaxedSessionOf } from './relaxed-session.ts';
import type { Database } from './schema.ts';

type Outcome<R> = { value: R } | { error: unknown };

/**
 * What an acknowledged write survives.
 * - `power-loss` (the default): the commit waits for the disk (SQLite `synchronous=FULL`,
 *   PostgreSQL `synchronous_commit=on`). For everything a person or an app handed over.
 * - `process-crash`: the commit is in the operating system (SQLite WAL with `synchronous=NORMAL`,
 *   PostgreSQL `synchronous_commit=off`) and reaches the disk with the next durable commit, the
 *   next checkpoint or within a second; a crash of Coffer or of PostgreSQL's backend loses nothing,
 *   a power cut or kernel crash may undo the last of these commits, never a durable one and never
 *   half of one. Only for single-use marks that expire within minutes (DPoP proof ids, code and
 *   refresh token consumption); docs/storage.md ("Durability") says what a power cut can undo.
 */
export type Durability = 'power-loss' | 'process-crash';

// Compiled once: building a raw query costs more than SQLite's change of the setting.
const RELAXED_SYNCHRONOUS = CompiledQuery.raw('PRAGMA synchronous = NORMAL');
const DURABLE_SYNCHRONOUS = CompiledQuery.raw(`PRAGMA synchronous = ${SQLITE_DURABLE_SYNCHRONOUS}`);
const SET_LOCAL_RELAXED = CompiledQuery.raw('SET LOCAL synchronous_commit = off');

/**
 * A write (an insert, or a conditional update) for many concurrent requests. On SQLite the writes
 * waiting at one turn of the event loop share one transaction, so one fsync makes them all durable
 * (group commit), and the event loop, which SQLite's commit blocks, waits for that fsync once per
 * batch instead of once per row. A unique violation fails only its own write: SQLite undoes the
 * failing statement and keeps the transaction. PostgreSQL commits concurrent transactions together
 * by itself; there a write of several statements still gets its own transaction, so that an act
 * and its audit event commit together (and wait for one WAL flush, not one each).
 */
export function createGroupCommit<Row, Result>(
  db: Kysely<Database>,
  dialect: Dialect,
  write: (db: Kysely<Database>, row: Row) => Promise<Result>,
  options: {
    durability?: Durability;
    /** `one` when `write` runs a single statement: it then needs no transaction of its own. */
    statements?: 'one' | 'many';
  } = {},
): (row: Row) => Promise<Result> {
  const relaxed = options.durability === 'process-crash';
  if (dialect === 'postgres') {
    // Several statements (an act and its audit event) are one transaction, committed once.
    if (!relaxed)
      return options.statements === 'one'
        ? (row) => write(db, row)
        : (row) => db.transaction().execute((tx) => write(tx, row));
    const session = relaxedSessionOf(db);
    if (!session) {
      return (row) =>
        db.transaction().execute(async (tx) => {
          await tx.executeQuery(SET_LOCAL_RELAXED);
          return write(tx, row);
        });
    }
    // One statement commits by itself; several need their transaction.
    return options.statements === 'one'
      ? (row) => write(session, row)
      : (row) => session.transaction().execute((tx) => write(tx, row));
  }
  const writeAll = (tx: Kysely<Database>) => async (rows: Row[]) => {
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
  };
  const batch = createBatcher<Row, Outcome<Result>>((rows) =>
    relaxed
      ? // The setting is the connection's: change it and restore it while holding the connection,
        // so no other transaction commits under it.
        db.connection().execute(async (connection) => {
          await connection.executeQuery(RELAXED_SYNCHRONOUS);
          try {
            return await connection.transaction().execute((tx) => writeAll(tx)(rows));
          } finally {
            await connection.executeQuery(DURABLE_SYNCHRONOUS);
          }
        })
      : db.transaction().execute((tx) => writeAll(tx)(rows)),
  );
  return async (row) => {
    const outcome = await batch(row);
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}
