import type { Kysely } from 'kysely';

/**
 * OpenID Provider state. Every row an instance needs to finish a flow lives here, so any
 * instance sharing the database can continue any flow. Secrets (codes, session ids) are stored
 * as hashes; expiry times of hot rows are epoch seconds (integers) so they compare cheaply.
 */
export function up() {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createTable('signing_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('alg', 'text', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('private_jwk_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('retire_after', 'text')
      .execute();

    await db.schema
      .createTable('interactions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('params', 'text', (c) => c.notNull())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('siwe_nonce', 'text', (c) => c.notNull())
      .addColumn('otp_hash', 'text')
      .addColumn('otp_email_sealed', 'text')
      .addColumn('otp_expires_at', 'text')
      .addColumn('otp_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('user_id', 'integer', (c) => c.references('users.user_id').onDelete('cascade'))
      .addColumn('login_type', 'text')
      .addColumn('auth_time', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();

    await db.schema
      .createTable('sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      .addColumn('tenant_id', 'integer', (c) => c.notNull())
      .addColumn('login_type', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('authorization_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text')
      .addColumn('code_challenge', 'text')
      .addColumn('login_type', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'integer', (c) => c.notNull())
      // What the tokens say of the user, copied at log-in so the exchange reads no user row.
      .addColumn('did', 'text', (c) => c.notNull())
      .addColumn('wallet_address', 'text')
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .addColumn('consumed_at', 'integer')
      .execute();

    await db.schema
      .createTable('revoked_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('rate_limits')
      .addColumn('bucket', 'text', (c) => c.primaryKey())
      .addColumn('window_start', 'integer', (c) => c.notNull())
      .addColumn('hits', 'integer', (c) => c.notNull())
      .execute();
  };
}
