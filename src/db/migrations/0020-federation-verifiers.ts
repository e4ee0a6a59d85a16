import type { Kysely } from 'kysely';

/**
 * Tenant verifiers as federation entities (issue #41): each has a static response encryption
 * key (ECDH-ES P-256), published in its Entity Configuration, because a wallet answering an
 * `openid_federation:` verifier encrypts to its federation metadata, never to a key of the
 * request. Made on first use, sealed like every key; the first of two racing makers wins.
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema
      .createTable('federation_encryption_keys')
      .addColumn('client_id', 'integer', (c) =>
        c.primaryKey().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('kid', 'text', (c) => c.notNull())
      .addColumn('key_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  };
}
