import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * Users hold no personal data in plaintext: the profile lives encrypted in block storage
 * (profile_cid), the e-mail only as a blind index. The unique indexes make duplicate e-mails
 * and wallets in one tenant impossible even under concurrent creates.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createTable('users')
      .addColumn('user_id', ...idColumn(dialect))
      .addColumn('tenant_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('restrict'),
      )
      // Null for people who signed up with a wallet and never gave an e-mail.
      .addColumn('email_index', 'text')
      .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('wallet_address', 'text')
      .addColumn('wallet_chain_id', 'text')
      .addColumn('profile_cid', 'text', (c) => c.notNull())
      .addColumn('did', 'text', (c) => c.notNull().unique())
      .addColumn('holder_key_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('users_tenant_email_unique')
      .on('users')
      .columns(['tenant_id', 'email_index'])
      .unique()
      .execute();
    // NULLs are distinct in unique indexes of both databases, so users without a wallet never clash.
    await db.schema
      .createIndex('users_tenant_wallet_unique')
      .on('users')
      .columns(['tenant_id', 'wallet_address'])
      .unique()
      .execute();
    // The hosted wallet finds a person's accounts across tenants by e-mail or wallet (DESIGN.md).
    await db.schema.createIndex('users_email_idx').on('users').column('email_index').execute();
    await db.schema.createIndex('users_wallet_idx').on('users').column('wallet_address').execute();
  };
}
