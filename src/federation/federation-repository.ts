import type { Insertable, Kysely } from 'kysely';
import type { Database, FederationEntityKeysTable, FederationKeysTable } from '../db/schema.ts';

export const findFederationSettings = (db: Kysely<Database>) =>
  db.selectFrom('federation_settings').selectAll().where('id', '=', 1).executeTakeFirst();

export async function saveFederationSettings(
  db: Kysely<Database>,
  row: { authority_hints: string; organization_name: string; updated_at: string },
): Promise<void> {
  await db
    .insertInto('federation_settings')
    .values({ id: 1, ...row })
    .onConflict((oc) => oc.column('id').doUpdateSet(row))
    .execute();
}

export const listFederationKeys = (db: Kysely<Database>) =>
  db.selectFrom('federation_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid').execute();

export async function insertFederationKey(db: Kysely<Database>, row: Insertable<FederationKeysTable>) {
  await db.insertInto('federation_keys').values(row).execute();
}

/** Retires every key in use but `keep`: they stay published until the overlap ends. */
export async function retireFederationKeys(db: Kysely<Database>, keep: string, now: string) {
  await db
    .updateTable('federation_keys')
    .set({ retired_at: now })
    .where('kid', '!=', keep)
    .where('retired_at', 'is', null)
    .execute();
}

export const findEntityKey = (db: Kysely<Database>, clientId: number) =>
  db.selectFrom('federation_entity_keys').selectAll().where('client_id', '=', clientId).executeTakeFirst();

/** The first key made for a tenant entity wins a race: the loser reads it back. */
export async function insertEntityKey(db: Kysely<Database>, row: Insertable<FederationEntityKeysTable>) {
  await db
    .insertInto('federation_entity_keys')
    .values(row)
    .onConflict((oc) => oc.column('client_id').doNothing())
    .execute();
}

/** Tenant issuers: the subordinates Coffer vouches for, with their certificate chains and names. */
export const listIssuerEntities = (db: Kysely<Database>) =>
  db
    .selectFrom('issuers')
    .innerJoin('clients', 'clients.client_id', 'issuers.client_id')
    .select(['issuers.client_id', 'issuers.chain_pem', 'clients.name'])
    .orderBy('issuers.client_id')
    .execute();

export const findIssuerEntity = (db: Kysely<Database>, clientId: number) =>
  db
    .selectFrom('issuers')
    .innerJoin('clients', 'clients.client_id', 'issuers.client_id')
    .select(['issuers.client_id', 'issuers.chain_pem', 'clients.name'])
    .where('issuers.client_id', '=', clientId)
    .executeTakeFirst();
