import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * Coffer as a verifier for its tenants (DESIGN.md, Verifying presentations):
 * - a client's request-signing key (sealed) and certificate chain (`coffer verifier enable`);
 * - one row per presentation request: what was asked, its nonce and state, the response
 *   encryption key made for it (sealed), and once answered the result (checks, issuers) and the
 *   verified claims, each sealed; the claims go RESULT_RETENTION seconds after the first read;
 * - callback events waiting to be delivered, signed, with their retry schedule.
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
  };
}
