import type { Kysely } from 'kysely';

/**
 * Coffer as its tenants' federation intermediate (issue #41): Coffer's federation keys (the
 * newest signs, retired ones stay published for an overlap), its settings (authority hints,
 * organisation name), and a federation key per tenant entity, which signs that tenant's Entity
 * Configuration. Keys are sealed like every key.
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema
      .createTable('federation_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('key_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('retired_at', 'text')
      .execute();
    await db.schema
      .createTable('federation_settings')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('authority_hints', 'text', (c) => c.notNull())
      .addColumn('organization_name', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('federation_entity_keys')
      .addColumn('client_id', 'integer', (c) =>
        c.primaryKey().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('kid', 'text', (c) => c.notNull())
      .addColumn('key_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  };
}
