import type { Kysely } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * Coffer as a credential issuer for its tenants (DESIGN.md, Issuing credentials):
 * - a client's issuer: its ES256 key (sealed) and chain, its BLS12-381 key for bbs-2023 (sealed)
 *   and `did:key`, and whether it follows HAIP;
 * - its credential configurations (JSON, as the API took them);
 * - offers: which configurations, the hashes of the pre-authorized code and transaction code,
 *   the claims (sealed) until issued, the state, and each change as an event;
 * - authorization codes of the issuance flows that wallets (clients nobody registers) start;
 * - issued credentials: only their id, configuration, status entry and hash stay;
 * - status lists, one per issuer and kind, as their bytes (base64) with a version for ETag;
 * - callback events waiting to be delivered.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createTable('issuers')
      .addColumn('client_id', 'integer', (c) =>
        c.primaryKey().references('clients.client_id').onDelete('cascade'),
      )
      .addColumn('key_sealed', 'text', (c) => c.notNull())
      .addColumn('chain_pem', 'text', (c) => c.notNull())
      .addColumn('bbs_key_sealed', 'text', (c) => c.notNull())
      .addColumn('bbs_did', 'text', (c) => c.notNull())
      .addColumn('haip', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('issuer_configurations')
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('issuers.client_id').onDelete('cascade'),
      )
      .addColumn('configuration_id', 'text', (c) => c.notNull())
      .addColumn('configuration', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('issuer_configurations_pk', ['client_id', 'configuration_id'])
      .execute();
    await db.schema
      .createTable('issuer_offers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('issuers.client_id').onDelete('cascade'),
      )
      .addColumn('configuration_ids', 'text', (c) => c.notNull())
      .addColumn('grant_type', 'text', (c) => c.notNull())
      .addColumn('pre_authorized_code_hash', 'text', (c) => c.unique())
      .addColumn('issuer_state', 'text', (c) => c.unique())
      .addColumn('tx_code_hash', 'text')
      .addColumn('tx_code_spec', 'text')
      .addColumn('tx_code_failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('claims_sealed', 'text')
      .addColumn('user_id', 'integer', (c) => c.references('users.user_id').onDelete('set null'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('callback_url', 'text')
      .addColumn('transaction_id_hash', 'text', (c) => c.unique())
      .addColumn('deferred_sealed', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('redeemed_at', 'text')
      .execute();
    await db.schema
      .createIndex('issuer_offers_client_idx')
      .on('issuer_offers')
      .columns(['client_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('issuer_offer_events')
      .addColumn('event_pk', ...idColumn(dialect))
      .addColumn('offer_id', 'text', (c) => c.notNull().references('issuer_offers.id').onDelete('cascade'))
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('issuer_offer_events_offer_idx')
      .on('issuer_offer_events')
      .column('offer_id')
      .execute();
    await db.schema
      .createTable('issuer_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('issuers.client_id').onDelete('cascade'),
      )
      .addColumn('wallet_client_id', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('dpop_jkt', 'text')
      .addColumn('user_id', 'integer', (c) => c.references('users.user_id').onDelete('cascade'))
      .addColumn('offer_id', 'text', (c) => c.references('issuer_offers.id').onDelete('cascade'))
      .addColumn('grant', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .addColumn('consumed_at', 'integer')
      .execute();
    await db.schema
      .createTable('status_lists')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('issuers.client_id').onDelete('cascade'),
      )
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('bytes', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('status_lists_client_idx')
      .on('status_lists')
      .columns(['client_id', 'kind'])
      .execute();
    await db.schema
      .createTable('issued_credentials')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'integer', (c) =>
        c.notNull().references('issuers.client_id').onDelete('cascade'),
      )
      .addColumn('offer_id', 'text', (c) => c.references('issuer_offers.id').onDelete('set null'))
      .addColumn('configuration_id', 'text', (c) => c.notNull())
      .addColumn('format', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('status_list_id', 'text', (c) => c.references('status_lists.id').onDelete('set null'))
      .addColumn('status_index', 'integer')
      .addColumn('credential_hash', 'text', (c) => c.notNull())
      .addColumn('notification_id', 'text')
      .addColumn('issued_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('issued_credentials_status_entry', ['status_list_id', 'status_index'])
      .execute();
    await db.schema
      .createIndex('issued_credentials_offer_idx')
      .on('issued_credentials')
      .column('offer_id')
      .execute();
    await db.schema
      .createIndex('issued_credentials_notification_idx')
      .on('issued_credentials')
      .column('notification_id')
      .execute();
    await db.schema
      .createTable('issuer_callbacks')
      .addColumn('callback_pk', ...idColumn(dialect))
      .addColumn('offer_id', 'text', (c) => c.notNull().references('issuer_offers.id').onDelete('cascade'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('issuer_callbacks_due_idx')
      .on('issuer_callbacks')
      .column('next_attempt_at')
      .execute();
  };
}
