import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * The console (issue #43): the people a client grants a role, named by the blind index of their
 * e-mail address or by their wallet address (never the address in clear), and their console
 * sessions, of which only the hash of the cookie's value is kept.
 */
export function up(dialect: Dialect) {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema
      .createTable('console_admins')
      .addColumn('id', ...idColumn(dialect))
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('email_index', 'text')
      .addColumn('wallet_address', 'text')
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('console_admins_email', ['client_id', 'email_index'])
      .addUniqueConstraint('console_admins_wallet', ['client_id', 'wallet_address'])
      .execute();
    await db.schema
      .createIndex('console_admins_email_idx')
      .on('console_admins')
      .column('email_index')
      .execute();
    await db.schema
      .createIndex('console_admins_wallet_idx')
      .on('console_admins')
      .column('wallet_address')
      .execute();
    await db.schema
      .createTable('console_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('email_index', 'text')
      .addColumn('wallet_address', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    // The minute sweep finds the sessions that ended through it (oidc/expired-rows.ts).
    await db.schema
      .createIndex('console_sessions_expires_idx')
      .on('console_sessions')
      .column('expires_at')
      .execute();
  };
}
