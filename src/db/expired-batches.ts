import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.ts';

/** Rows one sweep statement touches at most: a short lock, and other writers go in between. */
export const SWEEP_BATCH = 1000;

/**
 * Deletes the table's rows whose expires_at is before `before`, `batch` at a time. Each batch is
 * found through the table's expires_at index, so a sweep is linear in the expired rows only,
 * never in the table's size.
 */
export async function deleteExpiredInBatches(
  db: Kysely<Database>,
  table: string,
  key: readonly string[],
  before: number | string,
  batch = SWEEP_BATCH,
): Promise<void> {
  const columns = sql.join(key.map((column) => sql.ref(column)));
  await untilShort(batch, async () => {
    const result = await sql`
      delete from ${sql.table(table)} where (${columns}) in (
        select ${columns} from ${sql.table(table)} where expires_at < ${before} limit ${batch})`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
}

/** Runs a bounded statement again while it still touched a whole batch. */
export async function untilShort(batch: number, run: () => Promise<number>): Promise<void> {
  while ((await run()) >= batch) {}
}
