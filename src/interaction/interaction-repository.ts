import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Database, InteractionsTable } from '../db/schema.ts';

export type InteractionRow = Selectable<InteractionsTable>;

export async function insertInteraction(
  db: Kysely<Database>,
  row: Insertable<InteractionsTable>,
): Promise<void> {
  await db.insertInto('interactions').values(row).execute();
}

export async function findInteraction(db: Kysely<Database>, id: string): Promise<InteractionRow | undefined> {
  return db.selectFrom('interactions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateInteraction(
  db: Kysely<Database>,
  id: string,
  changes: Updateable<InteractionsTable>,
): Promise<void> {
  await db.updateTable('interactions').set(changes).where('id', '=', id).execute();
}

/** Finishes an interaction once: false when another request finished it first. */
export async function finishInteraction(
  db: Kysely<Database>,
  id: string,
  changes: Updateable<InteractionsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('interactions')
    .set({ ...changes, finished_at: new Date().toISOString() })
    .where('id', '=', id)
    .where('finished_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Counts a wrong one-time code; returns the attempts made so far (after this one). */
export async function countOneTimeCodeAttempt(db: Kysely<Database>, id: string): Promise<number> {
  const row = await db
    .updateTable('interactions')
    .set((eb) => ({ otp_attempts: eb('otp_attempts', '+', 1) }))
    .where('id', '=', id)
    .returning('otp_attempts')
    .executeTakeFirst();
  return row?.otp_attempts ?? Number.POSITIVE_INFINITY;
}
