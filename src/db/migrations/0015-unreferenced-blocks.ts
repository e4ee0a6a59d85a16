import type { Kysely } from 'kysely';

/**
 * Blocks that `coffer storage gc` found unreferenced on a backend that keeps no write time
 * (Kubo), with when it first saw each: one is removed only when a later collection, the grace
 * period after, still finds it unreferenced (storage/garbage-collection.ts).
 */
export function up() {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createTable('unreferenced_blocks')
      .addColumn('cid', 'text', (c) => c.primaryKey())
      .addColumn('first_seen_at', 'text', (c) => c.notNull())
      .execute();
  };
}
