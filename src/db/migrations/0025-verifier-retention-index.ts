import { type Kysely, sql } from 'kysely';

/**
 * The verifier's worker drops read claims past RESULT_RETENTION every second
 * (verifier-repository.ts `dropReadClaims`). Requests are kept after their claims go, so without
 * this index each run read the whole table; with it, only the requests that still hold claims
 * (issue #44: the scale bench saw a scan of verifier_requests per second at 10⁵).
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema
      .createIndex('verifier_requests_claims_read_idx')
      .on('verifier_requests')
      .column('first_read_at')
      .where(sql.ref('claims_sealed'), 'is not', null)
      .execute();
  };
}
