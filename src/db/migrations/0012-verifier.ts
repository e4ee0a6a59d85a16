import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * Coffer as a verifier for its tenants (DESIGN.md, Verifying presentations):
 * - a client's request-signing key (sealed) and certificate chain (`coffer verifier enable`);
 * - one row per presentation request: what was asked, its nonce and state, the response
 *   encryption key made for it (sealed), and once answered the result (checks, issuers) and the
 *   verified claims, each sealed; the claims go RESULT_RETENTION seconds after the first read;
 * - callback events waiting to be delivered, signed, with their retry schedule;
 * - logging in with a wallet (DESIGN.md, Logging in with a wallet): a client's `wallet_login`
 *   (JSON: the DCQL query and the claim naming the account), the interaction a request was made
 *   for, and the disclosed claims that follow a credential log-in into the tokens — sealed on
 *   the code and the refresh token, and per access token for userinfo until it expires.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createTable('verifiers')
      .addColumn('client_id', 'integer', (c) =>
        c.primaryKey().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('key_sealed', 'text', (c) => c.notNull())
      .addColumn('chain_pem', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('verifier_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('encryption_key_sealed', 'text', (c) => c.notNull())
      .addColumn('wallet_nonce', 'text')
      .addColumn('response_code_hash', 'text')
      .addColumn('result_sealed', 'text')
      .addColumn('claims_sealed', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('answered_at', 'text')
      .addColumn('first_read_at', 'text')
      .addColumn('interaction_id', 'text')
      .execute();
    await db.schema
      .createIndex('verifier_requests_interaction_idx')
      .on('verifier_requests')
      .column('interaction_id')
      .execute();
    await db.schema
      .createIndex('verifier_requests_client_idx')
      .on('verifier_requests')
      .columns(['client_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('verifier_callbacks')
      .addColumn('callback_pk', ...idColumn(dialect))
      .addColumn('request_id', 'text', (c) =>
        c.notNull().references('verifier_requests.id').onDelete('cascade'),
      )
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('verifier_callbacks_due_idx')
      .on('verifier_callbacks')
      .column('next_attempt_at')
      .execute();
    await db.schema.alterTable('clients').addColumn('wallet_login', 'text').execute();
    await db.schema.alterTable('authorization_codes').addColumn('claims_sealed', 'text').execute();
    await db.schema.alterTable('refresh_tokens').addColumn('claims_sealed', 'text').execute();
    await db.schema
      .createTable('access_token_claims')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      .addColumn('claims_sealed', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('access_token_claims_expiry_idx')
      .on('access_token_claims')
      .column('expires_at')
      .execute();
  };
}
