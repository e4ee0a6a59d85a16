import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Database, IssuerOfferEventsTable, IssuerOffersTable, IssuersTable } from '../db/schema.ts';
import type { CredentialConfiguration } from './configurations.ts';

/** Enabling again replaces the key and chain (and the HAIP flag); the BLS key was kept by the caller. */
export async function saveIssuer(db: Kysely<Database>, row: Insertable<IssuersTable>): Promise<void> {
  await db
    .insertInto('issuers')
    .values(row)
    .onConflict((oc) =>
      oc.column('client_id').doUpdateSet({
        key_sealed: row.key_sealed,
        chain_pem: row.chain_pem,
        haip: row.haip ?? 0,
      }),
    )
    .execute();
}

export const findIssuerRow = (db: Kysely<Database>, clientId: number) =>
  db.selectFrom('issuers').selectAll().where('client_id', '=', clientId).executeTakeFirst();

export async function saveConfiguration(
  db: Kysely<Database>,
  clientId: number,
  id: string,
  configuration: CredentialConfiguration,
  now: string,
): Promise<boolean> {
  const existing = await db
    .selectFrom('issuer_configurations')
    .select('configuration_id')
    .where('client_id', '=', clientId)
    .where('configuration_id', '=', id)
    .executeTakeFirst();
  const text = JSON.stringify(configuration);
  if (existing) {
    await db
      .updateTable('issuer_configurations')
      .set({ configuration: text, updated_at: now })
      .where('client_id', '=', clientId)
      .where('configuration_id', '=', id)
      .execute();
  } else {
    await db
      .insertInto('issuer_configurations')
      .values({ client_id: clientId, configuration_id: id, configuration: text, updated_at: now })
      .execute();
  }
  return !existing;
}

export async function listConfigurations(
  db: Kysely<Database>,
  clientId: number,
): Promise<Map<string, CredentialConfiguration>> {
  const rows = await db
    .selectFrom('issuer_configurations')
    .select(['configuration_id', 'configuration'])
    .where('client_id', '=', clientId)
    .orderBy('configuration_id')
    .execute();
  return new Map(
    rows.map((r) => [r.configuration_id, JSON.parse(r.configuration) as CredentialConfiguration]),
  );
}

export async function findConfigurations(
  db: Kysely<Database>,
  clientId: number,
  ids: string[],
): Promise<Map<string, CredentialConfiguration>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('issuer_configurations')
    .select(['configuration_id', 'configuration'])
    .where('client_id', '=', clientId)
    .where('configuration_id', 'in', ids)
    .execute();
  return new Map(
    rows.map((r) => [r.configuration_id, JSON.parse(r.configuration) as CredentialConfiguration]),
  );
}

export async function deleteConfiguration(
  db: Kysely<Database>,
  clientId: number,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('issuer_configurations')
    .where('client_id', '=', clientId)
    .where('configuration_id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Scopes name one configuration across the deployment, so an authorization request names its issuer. */
export async function configurationsWithScope(db: Kysely<Database>, scope: string) {
  const rows = await db.selectFrom('issuer_configurations').selectAll().execute();
  return rows
    .map((r) => ({
      clientId: r.client_id,
      id: r.configuration_id,
      configuration: JSON.parse(r.configuration) as CredentialConfiguration,
    }))
    .filter((r) => r.configuration.scope === scope);
}

export const insertOffer = (db: Kysely<Database>, row: Insertable<IssuerOffersTable>) =>
  db.insertInto('issuer_offers').values(row).execute();

export const findOffer = (db: Kysely<Database>, id: string) =>
  db.selectFrom('issuer_offers').selectAll().where('id', '=', id).executeTakeFirst();

export const findOfferByCodeHash = (db: Kysely<Database>, codeHash: string) =>
  db
    .selectFrom('issuer_offers')
    .selectAll()
    .where('pre_authorized_code_hash', '=', codeHash)
    .executeTakeFirst();

/** Changes an offer only if it still has the values `expected` names; false when another request won. */
export async function updateOffer(
  db: Kysely<Database>,
  id: string,
  expected: Partial<Selectable<IssuerOffersTable>>,
  changes: Updateable<IssuerOffersTable>,
): Promise<boolean> {
  let query = db.updateTable('issuer_offers').set(changes).where('id', '=', id);
  for (const [column, value] of Object.entries(expected)) {
    const name = column as keyof IssuerOffersTable;
    query = value === null ? query.where(name, 'is', null) : query.where(name, '=', value as never);
  }
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A wrong transaction code counts, atomically, while fewer than `limit` were wrong. */
export async function countTxCodeFailure(db: Kysely<Database>, id: string, limit: number): Promise<void> {
  await db
    .updateTable('issuer_offers')
    .set((eb) => ({ tx_code_failures: eb('tx_code_failures', '+', 1) }))
    .where('id', '=', id)
    .where('tx_code_failures', '<', limit)
    .execute();
}

export const recordOfferEvent = (db: Kysely<Database>, row: Insertable<IssuerOfferEventsTable>) =>
  db.insertInto('issuer_offer_events').values(row).execute();

export const offerEventsOf = (db: Kysely<Database>, offerId: string) =>
  db
    .selectFrom('issuer_offer_events')
    .select(['event', 'status', 'at'])
    .where('offer_id', '=', offerId)
    .orderBy('event_pk')
    .execute();

export const issuedCredentialsOf = (db: Kysely<Database>, clientId: number, offerId?: string) => {
  let query = db.selectFrom('issued_credentials').selectAll().where('client_id', '=', clientId);
  if (offerId !== undefined) query = query.where('offer_id', '=', offerId);
  return query.orderBy('issued_at').orderBy('id').limit(1000).execute();
};

/**
 * An offer that expired unredeemed keeps no claims (they were kept only to be issued);
 * authorization codes and used c_nonces past their life are deleted.
 */
export async function sweepExpired(db: Kysely<Database>, now: Date): Promise<void> {
  await db
    .updateTable('issuer_offers')
    .set({ claims_sealed: null })
    .where('status', '=', 'offered')
    .where('expires_at', '<=', now.toISOString())
    .where('claims_sealed', 'is not', null)
    .execute();
  await db
    .deleteFrom('issuer_codes')
    .where('expires_at', '<=', Math.floor(now.getTime() / 1000))
    .execute();
  // Used c_nonces matter only until they expire (key-proofs.ts).
  await db
    .deleteFrom('verifier_nonces')
    .where('verifier', 'like', 'c_nonce:%')
    .where('expires_at', '<', Math.floor(now.getTime() / 1000))
    .execute();
}
