import { type Kysely, sql } from 'kysely';
import { type Dialect, idColumn } from '../dialect.ts';

/**
 * Receiving credentials by OpenID4VCI 1.0 (DESIGN.md, Receiving credentials):
 * - a received credential has no API client that stored it, so credentials.issuer_client_id
 *   becomes optional, and the credential issuer's identifier is kept instead;
 * - each copy of a received credential (batch issuance) is its own block with its own holder
 *   key (sealed), and remembers when it was last presented, so that an unused copy goes first;
 * - the notification endpoint and its token (sealed) are kept for `credential_deleted`;
 * - deferred issuances wait in their own table, so that polling survives a restart.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    if (dialect === 'postgres') {
      await sql`alter table credentials alter column issuer_client_id drop not null`.execute(db);
    } else {
      // SQLite cannot drop a NOT NULL constraint: rebuild the table with the same columns.
      await sql`create table credentials_new (
        credential_pk integer primary key autoincrement,
        user_id integer not null references users(user_id) on delete cascade,
        credential_id text not null,
        cid text not null,
        content_hash text not null,
        issuer_client_id integer references clients(client_id) on delete restrict,
        created_at text not null,
        format text not null default 'ldp_vc'
      )`.execute(db);
      await sql`insert into credentials_new (credential_pk, user_id, credential_id, cid, content_hash, issuer_client_id, created_at, format)
        select credential_pk, user_id, credential_id, cid, content_hash, issuer_client_id, created_at, format from credentials`.execute(
        db,
      );
      await sql`drop table credentials`.execute(db);
      await sql`alter table credentials_new rename to credentials`.execute(db);
      await db.schema
        .createIndex('credentials_user_credential_unique')
        .on('credentials')
        .columns(['user_id', 'credential_id'])
        .unique()
        .execute();
      await db.schema
        .createIndex('credentials_user_newest_idx')
        .on('credentials')
        .columns(['user_id', 'credential_pk'])
        .execute();
    }
    await db.schema.alterTable('credentials').addColumn('credential_issuer', 'text').execute();
    await db.schema.alterTable('credentials').addColumn('notification_sealed', 'text').execute();

    await db.schema
      .createTable('credential_copies')
      .addColumn('credential_pk', 'integer', (c) =>
        c.notNull().references('credentials.credential_pk').onDelete('cascade'),
      )
      .addColumn('copy_index', 'integer', (c) => c.notNull())
      .addColumn('cid', 'text', (c) => c.notNull())
      .addColumn('holder_key_sealed', 'text', (c) => c.notNull())
      .addColumn('presented_at', 'text')
      .addPrimaryKeyConstraint('credential_copies_pk', ['credential_pk', 'copy_index'])
      .execute();

    await db.schema
      .createTable('deferred_issuances')
      .addColumn('deferred_pk', ...idColumn(dialect))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      .addColumn('credential_issuer', 'text', (c) => c.notNull())
      .addColumn('configuration_id', 'text', (c) => c.notNull())
      // Access token, DPoP key, transaction id and holder keys: sealed to the row.
      .addColumn('state_sealed', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('failure', 'text')
      .addColumn('next_poll_at', 'text', (c) => c.notNull())
      .addColumn('give_up_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('deferred_issuances_due_idx')
      .on('deferred_issuances')
      .columns(['status', 'next_poll_at'])
      .execute();
  };
}
