import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * Stored credentials and registered JSON-LD contexts. A credential's content lives encrypted
 * in block storage (cid); the row holds what listing and look-up need, and a keyed hash of the
 * content so that storing the same credential again is recognised without reading the block.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createTable('credentials')
      .addColumn('credential_pk', ...idColumn(dialect))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      // The credential's own `id` (e.g. urn:uuid:…), unique per user.
      .addColumn('credential_id', 'text', (c) => c.notNull())
      .addColumn('cid', 'text', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('issuer_client_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('restrict'),
      )
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('credentials_user_credential_unique')
      .on('credentials')
      .columns(['user_id', 'credential_id'])
      .unique()
      .execute();
    // Listing is newest first per user.
    await db.schema
      .createIndex('credentials_user_newest_idx')
      .on('credentials')
      .columns(['user_id', 'credential_pk'])
      .execute();

    await db.schema
      .createTable('jsonld_contexts')
      .addColumn('url', 'text', (c) => c.primaryKey())
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  };
}
