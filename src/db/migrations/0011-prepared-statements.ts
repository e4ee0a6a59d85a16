import type { Kysely } from 'kysely';

/**
 * A bbs-2023 credential's prepared statements (formats/ldp-vc/bbs-2023/prepared-statements.ts): the
 * CID of their encrypted block, written when the store checked the base proof. Null for every
 * other format, for rows stored before, and for credentials received by OpenID4VCI; their
 * disclosures are computed from the credential alone, as before.
 */
export function up() {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema.alterTable('credentials').addColumn('prepared_cid', 'text').execute();
  };
}
