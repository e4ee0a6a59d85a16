import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createTable('clients')
      .addColumn('client_id', ...idColumn(dialect))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('is_master', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('is_verifier', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('parent_id', 'integer', (c) => c.references('clients.client_id').onDelete('restrict'))
      .addColumn('client_secret_hash', 'text')
      .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('domain', 'text')
      .addColumn('subdomain', 'text', (c) => c.unique())
      .addColumn('timezone', 'text')
      .addColumn('address_1', 'text')
      .addColumn('address_2', 'text')
      .addColumn('country', 'text')
      .addColumn('province', 'text')
      .addColumn('city', 'text')
      .addColumn('from_email_address', 'text')
      .addColumn('esp_token_sealed', 'text')
      .addColumn('recaptcha_key_sealed', 'text')
      .addColumn('recaptcha_threshold', 'real', (c) => c.notNull().defaultTo(0.5))
      .addColumn('recaptcha_enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('privacy_link', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('clients_parent_idx')
      .on('clients')
      .columns(['parent_id', 'client_id'])
      .execute();

    await db.schema
      .createTable('api_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('api_tokens_client_idx').on('api_tokens').column('client_id').execute();
  };
}
