import { type Kysely, sql } from 'kysely';

/** The scopes of OpenID Connect (Core §5.4, §11): an issuance may never claim them. */
const RESERVED_SCOPES = ['openid', 'profile', 'email', 'address', 'phone', 'offline_access'];

/**
 * Rules at the edges (issue #39). A configuration's scope gets a column of its own with a unique
 * index, so an authorization request finds its configuration by index and two tenants racing for
 * one scope cannot both have it; a scope that OpenID Connect reserves is taken away from the
 * configurations that had one (it would capture apps' log-ins). Results of Coffer's verifier
 * that an account's hosted wallet gave are linked to the account, for its erasure.
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema.alterTable('issuer_configurations').addColumn('scope', 'text').execute();
    const rows = await db
      .selectFrom('issuer_configurations')
      .select(['client_id', 'configuration_id', 'configuration'])
      .orderBy('updated_at')
      .orderBy('client_id')
      .execute();
    const taken = new Set<string>();
    for (const row of rows) {
      const configuration = JSON.parse(row.configuration) as { scope?: string };
      const scope = configuration.scope;
      if (scope === undefined) continue;
      // The first configuration to have a scope keeps it (the API refused a second one).
      const keep = !RESERVED_SCOPES.includes(scope) && !taken.has(scope);
      if (keep) taken.add(scope);
      else delete configuration.scope;
      await db
        .updateTable('issuer_configurations')
        .set({ scope: keep ? scope : null, configuration: JSON.stringify(configuration) })
        .where('client_id', '=', row.client_id)
        .where('configuration_id', '=', row.configuration_id)
        .execute();
    }
    await db.schema
      .createIndex('issuer_configurations_scope')
      .on('issuer_configurations')
      .column('scope')
      .unique()
      .execute();
    // What the wallet said of each issued credential (per notification_id), so a notification is
    // taken once and in order; rows of offers a notification had moved on are filled from them.
    await db.schema.alterTable('issued_credentials').addColumn('notification_event', 'text').execute();
    for (const [status, event] of [
      ['accepted', 'credential_accepted'],
      ['failed', 'credential_failure'],
      ['deleted', 'credential_deleted'],
    ] as const) {
      await sql`update issued_credentials set notification_event = ${event}
        where notification_id is not null
          and offer_id in (select id from issuer_offers where status = ${status})`.execute(db);
    }
    // Which account's hosted wallet answered which of Coffer's own verifier requests: an erasure
    // deletes the claims those results hold.
    await db.schema
      .createTable('verifier_request_accounts')
      .addColumn('request_id', 'text', (c) =>
        c.notNull().references('verifier_requests.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.user_id').onDelete('cascade'))
      .addPrimaryKeyConstraint('verifier_request_accounts_pk', ['user_id', 'request_id'])
      .execute();
  };
}
