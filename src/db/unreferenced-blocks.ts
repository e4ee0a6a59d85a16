import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

const BATCH = 500;

function batches<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

/**
 * When garbage collection first saw each unreferenced block of a backend without write times
 * (storage/garbage-collection.ts, `UnreferencedSightings`).
 */
export function unreferencedBlockSightings(db: Kysely<Database>) {
  return {
    async read(): Promise<Map<string, Date>> {
      const rows = await db.selectFrom('unreferenced_blocks').select(['cid', 'first_seen_at']).execute();
      return new Map(rows.map((row) => [row.cid, new Date(row.first_seen_at)]));
    },
    async record(cids: string[], at: Date): Promise<void> {
      for (const batch of batches(cids)) {
        await db
          .insertInto('unreferenced_blocks')
          .values(batch.map((cid) => ({ cid, first_seen_at: at.toISOString() })))
          .onConflict((conflict) => conflict.column('cid').doNothing())
          .execute();
      }
    },
    async forget(cids: string[]): Promise<void> {
      for (const batch of batches(cids)) {
        await db.deleteFrom('unreferenced_blocks').where('cid', 'in', batch).execute();
      }
    },
  };
}
