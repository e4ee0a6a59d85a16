import { type Kysely, sql } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * The audit trail (issue #42): one append-only row per administrative or security-relevant act,
 * written unsealed in the act's own transaction; the sealer (audit/audit-sealer.ts) later gives it
 * its chain position and hash. A truncation by retention leaves a signed checkpoint.
 */
export function up(dialect: Dialect) {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema
      .createTable('audit_events')
      .addColumn('id', ...idColumn(dialect))
      .addColumn('occurred_at', 'text', (c) => c.notNull())
      .addColumn('client_id', 'integer')
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('targets', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('request_id', 'text')
      .addColumn('chain_seq', 'bigint', (c) => c.unique())
      .addColumn('prev_hash', 'text')
      .addColumn('hash', 'text')
      .execute();
    await db.schema
      .createIndex('audit_events_client')
      .on('audit_events')
      .columns(['client_id', 'id'])
      .execute();
    // The sealer's queue: the rows without a position.
    await db.schema
      .createIndex('audit_events_unsealed')
      .on('audit_events')
      .column('id')
      .where(sql.ref('chain_seq'), 'is', null)
      .execute();
    await db.schema
      .createTable('audit_checkpoints')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('chain_seq', 'bigint', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  };
}
