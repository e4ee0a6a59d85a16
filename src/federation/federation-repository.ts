import type { Insertable, Kysely } from 'kysely';
import type {
  Database,
  FederationEncryptionKeysTable,
  FederationEntityKeysTable,
  FederationKeysTable,
} from '../db/schema.ts';

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

export const findEncryptionKey = (db: Kysely<Database>, clientId: number) =>
  db
    .selectFrom('federation_encryption_keys')
    .selectAll()
    .where('client_id', '=', clientId)
    .executeTakeFirst();

/** As insertEntityKey: the first key made wins a race, the loser reads it back. */
export async function insertEncryptionKey(
  db: Kysely<Database>,
  row: Insertable<FederationEncryptionKeysTable>,
) {
  await db
    .insertInto('federation_encryption_keys')
    .values(row)
    .onConflict((oc) => oc.column('client_id').doNothing())
    .execute();
}

/** Tenant verifiers: subordinates too, with the certificate chains of their request-signing keys. */
export const listVerifierEntities = (db: Kysely<Database>) =>
  db
    .selectFrom('verifiers')
    .innerJoin('clients', 'clients.client_id', 'verifiers.client_id')
    .select(['verifiers.client_id', 'verifiers.chain_pem', 'clients.name'])
    .orderBy('verifiers.client_id')
    .execute();

export const findVerifierEntity = (db: Kysely<Database>, clientId: number) =>
  db
    .selectFrom('verifiers')
    .innerJoin('clients', 'clients.client_id', 'verifiers.client_id')
    .select(['verifiers.client_id', 'verifiers.chain_pem', 'clients.name'])
    .where('verifiers.client_id', '=', clientId)
    .executeTakeFirst();
