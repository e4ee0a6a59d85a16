import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, SessionsTable } from '../db/schema.ts';

export type SessionRow = Selectable<SessionsTable>;

export async function insertSession(db: Kysely<Database>, row: Insertable<SessionsTable>): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

export async function findLiveSession(db: Kysely<Database>, idHash: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', new Date().toISOString())
    .executeTakeFirst();
}

/** Ends a session: its cookie is refused from now on, on every instance. */
export async function deleteSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}
