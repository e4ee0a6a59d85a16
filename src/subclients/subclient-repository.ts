import type { Kysely, Selectable } from 'kysely';
import { now } from '../db/dialect.ts';
import type { ClientsTable, Database } from '../db/schema.ts';
import type { SubClientFields } from './subclient-rules.ts';

/** The columns a sub-client response shows; reading only these halves the cost of a list. */
const COLUMNS = [
  'client_id',
  'name',
  'domain',
  'subdomain',
  'timezone',
  'address_1',
  'address_2',
  'country',
  'province',
  'city',
  'from_email_address',
  'esp_token_sealed',
  'recaptcha_key_sealed',
  'recaptcha_threshold',
  'recaptcha_enabled',
  'created_at',
  'privacy_link',
] as const;

export type ClientRow = Pick<Selectable<ClientsTable>, (typeof COLUMNS)[number]>;

export async function insertSubClient(
  db: Kysely<Database>,
  parentId: number,
  fields: SubClientFields,
): Promise<ClientRow> {
  return db
    .insertInto('clients')
    .values({
      ...fields,
      parent_id: parentId,
      is_master: 0,
      is_verifier: 0,
      redirect_uris: '[]',
      created_at: now(),
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function updateSubClient(
  db: Kysely<Database>,
  parentId: number,
  clientId: number,
  fields: SubClientFields,
): Promise<ClientRow | undefined> {
  return db
    .updateTable('clients')
    .set(fields)
    .where('client_id', '=', clientId)
    .where('parent_id', '=', parentId)
    .returning(COLUMNS)
    .executeTakeFirst();
}

export async function findSubClient(
  db: Kysely<Database>,
  parentId: number,
  clientId: number,
): Promise<ClientRow | undefined> {
  return db
    .selectFrom('clients')
    .select(COLUMNS)
    .where('client_id', '=', clientId)
    .where('parent_id', '=', parentId)
    .executeTakeFirst();
}

export async function countSubClients(db: Kysely<Database>, parentId: number): Promise<number> {
  const row = await db
    .selectFrom('clients')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('parent_id', '=', parentId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listSubClients(
  db: Kysely<Database>,
  parentId: number,
  limit: number,
  offset: number,
): Promise<ClientRow[]> {
  return db
    .selectFrom('clients')
    .select(COLUMNS)
    .where('parent_id', '=', parentId)
    .orderBy('client_id')
    .limit(limit)
    .offset(offset)
    .execute();
}
