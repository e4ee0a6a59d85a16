import type { Kysely } from 'kysely';

/**
 * Credentials of every format (DESIGN.md, Credential formats): each row says which format its
 * block holds, so reading a credential never has to guess from its shape. Rows stored before
 * this migration are bbs-2023 `ldp_vc` credentials.
 */
export function up() {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .alterTable('credentials')
      .addColumn('format', 'text', (c) => c.notNull().defaultTo('ldp_vc'))
      .execute();
  };
}
