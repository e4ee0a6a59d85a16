import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

/**
 * Status lists belong to their signing key (issue #39, DESIGN.md "Rules at the edges"). Each
 * `issuer enable` gives the issuer's ES256 key an id; a list records the key that signs it, so a
 * new key starts new lists and the lists of an earlier key keep being signed by that key, which
 * is kept (sealed, as before) in issuer_retired_keys until the last credential on its lists has
 * expired — hence each issued credential's expiry. Existing issuers get an id for the key they
 * have; their lists are taken to be that key's (the key before it is gone already).
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema.alterTable('issuers').addColumn('signing_key_id', 'text').execute();
    await db.schema.alterTable('status_lists').addColumn('signing_key_id', 'text').execute();
    await db.schema.alterTable('issued_credentials').addColumn('expires_at', 'text').execute();
    const issuers = await db.selectFrom('issuers').select('client_id').execute();
    for (const { client_id } of issuers) {
      const id = randomBytes(12).toString('base64url');
      await db
        .updateTable('issuers')
        .set({ signing_key_id: id })
        .where('client_id', '=', client_id)
        .execute();
      await db
        .updateTable('status_lists')
        .set({ signing_key_id: id })
        .where('client_id', '=', client_id)
        .execute();
    }
    await db.schema
      .createTable('issuer_retired_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('issuers.client_id').onDelete('cascade'),
      )
      .addColumn('key_sealed', 'text', (c) => c.notNull())
      .addColumn('chain_pem', 'text', (c) => c.notNull())
      .addColumn('retired_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('status_lists_signing_key_idx')
      .on('status_lists')
      .columns(['client_id', 'signing_key_id', 'kind'])
      .execute();
    await db.schema
      .createIndex('issued_credentials_status_list_idx')
      .on('issued_credentials')
      .columns(['status_list_id', 'expires_at'])
      .execute();
  };
}
