import type { Kysely } from 'kysely';

/**
 * The OpenID Provider's refresh tokens, DPoP and pushed authorization requests (DESIGN.md, Tokens):
 * - clients say which grants they may use, whether their tokens must be DPoP-bound and whether
 *   they must push their authorization requests;
 * - refresh tokens, hashed, one row per token of a family (a family is one log-in's chain of
 *   rotations), so a reused one can revoke the whole family and the access tokens it gave;
 * - DPoP proof ids seen, so a proof is used once on any instance within its window;
 * - pushed authorization requests, single use, 60 s;
 * - codes remember the DPoP key they are bound to (RFC 9449 §10).
 */
export function up() {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .alterTable('clients')
      .addColumn('grant_types', 'text', (c) => c.notNull().defaultTo('["authorization_code"]'))
      .execute();
    await db.schema
      .alterTable('clients')
      .addColumn('dpop_bound', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('clients')
      .addColumn('require_par', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('authorization_codes').addColumn('dpop_jkt', 'text').execute();

    await db.schema
      .createTable('refresh_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('family_id', 'text', (c) => c.notNull())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'integer', (c) => c.notNull())
      .addColumn('login_type', 'text', (c) => c.notNull())
      .addColumn('did', 'text', (c) => c.notNull())
      .addColumn('wallet_address', 'text')
      .addColumn('jkt', 'text')
      /** The jti of the access token issued beside this refresh token: revoked with the family. */
      .addColumn('access_jti', 'text', (c) => c.notNull())
      .addColumn('created_at', 'integer', (c) => c.notNull())
      /** The family's absolute end (REFRESH_TOKEN_TTL from the log-in); rotation never extends it. */
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .addColumn('used_at', 'integer')
      .addColumn('revoked_at', 'integer')
      .execute();
    await db.schema
      .createIndex('refresh_tokens_family_idx')
      .on('refresh_tokens')
      .column('family_id')
      .execute();

    await db.schema
      .createTable('dpop_proofs')
      .addColumn('proof_key', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('pushed_requests')
      .addColumn('uri_hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('params', 'text', (c) => c.notNull())
      .addColumn('dpop_jkt', 'text')
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .addColumn('consumed_at', 'integer')
      .execute();
  };
}
