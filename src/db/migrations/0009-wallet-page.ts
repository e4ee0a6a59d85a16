import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * The person's wallet page and sign-out (DESIGN.md, The person's wallet):
 * - clients register where RP-initiated logout may send the browser back;
 * - a received credential keeps its issuer's display (name, logo), sealed, for the page;
 * - the history of presentations and arrivals: one sealed row per event and account, so the
 *   database says only that something happened to an account, never what or with whom.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .alterTable('clients')
      .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema.alterTable('credentials').addColumn('issuer_display_sealed', 'text').execute();
    await db.schema
      .createTable('wallet_history')
      .addColumn('history_pk', ...idColumn(dialect))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('detail_sealed', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('wallet_history_user_idx')
      .on('wallet_history')
      .columns(['user_id', 'history_pk'])
      .execute();
  };
}
