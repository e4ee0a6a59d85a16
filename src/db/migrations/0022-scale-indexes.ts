import type { Kysely } from 'kysely';

/**
 * Indexes for lookups that read a growing table whole (issue #44, docs/benchmarks.md "Scale"):
 * an erased account's unfinished offers, a tenant's issued credentials in order, and the expiry
 * sweeps, which then touch only the expired rows.
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema.createIndex('issuer_offers_user_idx').on('issuer_offers').column('user_id').execute();
    await db.schema
      .createIndex('issued_credentials_client_issued_idx')
      .on('issued_credentials')
      .columns(['client_id', 'issued_at', 'id'])
      .execute();
    for (const table of [
      'authorization_codes',
      'dpop_proofs',
      'pushed_requests',
      'refresh_tokens',
      'revoked_tokens',
      'verifier_nonces',
    ]) {
      await db.schema.createIndex(`${table}_expires_idx`).on(table).column('expires_at').execute();
    }
  };
}
