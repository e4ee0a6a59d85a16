import type { Kysely } from 'kysely';

/**
 * rememberNonce (db/seen-once.ts) drops a party's expired values before each mark, by
 * `verifier` and `expires_at`; the primary key (verifier, nonce) could only narrow that to the
 * party, so every mark read all of the party's live values: an issuer's c_nonces, a verifier's
 * nonces, thousands of rows at a few dozen issuances per second, a cost that grew with traffic.
 */
export function up() {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .createIndex('verifier_nonces_expiry_idx')
      .on('verifier_nonces')
      .columns(['verifier', 'expires_at'])
      .execute();
  };
}
