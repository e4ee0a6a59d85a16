import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * PostgreSQL connections whose commits do not wait for the disk (`synchronous_commit = off` set
 * for the session when the connection opens), for the single-use marks that group-commit.ts
 * calls `process-crash` durable. Setting it per transaction instead (`SET LOCAL`) cost each such
 * write two more round trips (BEGIN and the SET before the statement, COMMIT after).
 */
const relaxedSessions = new WeakMap<Kysely<Database>, Kysely<Database>>();

export function registerRelaxedSession(db: Kysely<Database>, relaxed: Kysely<Database>): void {
  relaxedSessions.set(db, relaxed);
}

/** The relaxed connections that belong to `db`, if its database has them (PostgreSQL only). */
export const relaxedSessionOf = (db: Kysely<Database>): Kysely<Database> | undefined =>
  relaxedSessions.get(db);
