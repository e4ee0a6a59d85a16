import type { Kysely } from 'kysely';

/**
 * People's log-in sessions were never deleted: an ended one stayed in `sessions` for good, so the
 * table grew with every log-in ever made. The sweeper (oidc/expired-rows.ts) now deletes them, and
 * finds them through this index, in time linear in the ended sessions only.
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();
  };
}
