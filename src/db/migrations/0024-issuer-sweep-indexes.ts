import type { Kysely } from 'kysely';

/**
 * The issuer's minute sweep (issuer-repository.ts `sweepExpired`) finds expired offers and codes
 * through these, so a sweep reads only what expired, whatever the tables' size (issue #44).
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema
      .createIndex('issuer_offers_status_expires_idx')
      .on('issuer_offers')
      .columns(['status', 'expires_at'])
      .execute();
    await db.schema.createIndex('issuer_codes_expires_idx').on('issuer_codes').column('expires_at').execute();
  };
}
