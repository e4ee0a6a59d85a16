import type { Kysely } from 'kysely';

const W3C_FORMATS = ['jwt_vc_json', 'ldp_vc'];
const SUBJECT = 'credentialSubject';

interface StoredConfiguration {
  format: string;
  claims?: { path: unknown[] }[];
}

/**
 * W3C claim paths point into the credential (issue #39; OpenID4VCI 1.0 Appendix C): the
 * `jwt_vc_json` and `ldp_vc` configurations stored so far took their paths from a claim name
 * under credentialSubject, so `credentialSubject` is put in front of each. A path that starts with
 * it already was written to the spec by its tenant and meant the credential's subject: it stays.
 *
 * The claims of offers not yet issued are sealed with the master key, which a migration does not
 * hold, so they keep their shape and are marked instead: `legacy_w3c_claims` = 1 says the sealed
 * claims give a W3C credential's subject members directly (issue-time code puts them under
 * credentialSubject); every later offer addresses them as the credential does.
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    const rows = await db
      .selectFrom('issuer_configurations')
      .select(['client_id', 'configuration_id', 'configuration'])
      .execute();
    for (const row of rows) {
      const configuration = JSON.parse(row.configuration) as StoredConfiguration;
      if (!W3C_FORMATS.includes(configuration.format) || !configuration.claims) continue;
      let changed = false;
      for (const claim of configuration.claims) {
        if (claim.path[0] === SUBJECT) continue;
        claim.path = [SUBJECT, ...claim.path];
        changed = true;
      }
      if (!changed) continue;
      await db
        .updateTable('issuer_configurations')
        .set({ configuration: JSON.stringify(configuration) })
        .where('client_id', '=', row.client_id)
        .where('configuration_id', '=', row.configuration_id)
        .execute();
    }
    await db.schema
      .alterTable('issuer_offers')
      .addColumn('legacy_w3c_claims', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db
      .updateTable('issuer_offers')
      .set({ legacy_w3c_claims: 1 })
      .where('claims_sealed', 'is not', null)
      .execute();
  };
}
