import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The hosted wallet. An OpenID4VP consent is an interaction like a log-in, but its verifier need
 * not be a client of this service (x509_hash, redirect_uri), so interactions.client_id becomes
 * optional; the identity a person proves in it (wallet address, e-mail blind index) is kept on
 * the interaction. Registered verifiers get their metadata (keys, encryption values, formats).
 * Nonces are remembered per verifier so that a request is answered once.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    if (dialect === 'postgres') {
      await sql`alter table interactions alter column client_id drop not null`.execute(db);
    } else {
      // SQLite cannot drop a NOT NULL constraint: rebuild the table with the same columns.
      await sql`create table interactions_new (
        id text primary key,
        kind text not null,
        client_id integer references clients(client_id) on delete cascade,
        params text not null,
        csrf_token text not null,
        siwe_nonce text not null,
        otp_hash text,
        otp_email_sealed text,
        otp_expires_at text,
        otp_attempts integer not null default 0,
        user_id integer references users(user_id) on delete cascade,
        login_type text,
        auth_time integer,
        created_at text not null,
        expires_at text not null,
        finished_at text
      )`.execute(db);
      await sql`insert into interactions_new select * from interactions`.execute(db);
      await sql`drop table interactions`.execute(db);
      await sql`alter table interactions_new rename to interactions`.execute(db);
    }
    await db.schema.alterTable('interactions').addColumn('identity_wallet', 'text').execute();
    await db.schema.alterTable('interactions').addColumn('identity_email_index', 'text').execute();
    await db.schema.alterTable('clients').addColumn('verifier_metadata', 'text').execute();

    await db.schema
      .createTable('verifier_nonces')
      .addColumn('verifier', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('verifier_nonces_pk', ['verifier', 'nonce'])
      .execute();
  };
}
