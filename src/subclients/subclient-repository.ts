import { type Kysely, type Selectable, sql } from 'kysely';
import { now } from '../db/dialect.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
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

// The reads below serve every sub-client request (and x-api-subclient-id on user creation), so
// they are compiled once (db/prepared-query.ts) instead of being built on each request.

const subClientById = prepareQuery((db, param: Param<{ parentId: number; clientId: number }>) =>
  db
    .selectFrom('clients')
    .select(COLUMNS)
    .where('client_id', '=', param('clientId'))
    .where('parent_id', '=', param('parentId')),
);

export async function findSubClient(
  db: Kysely<Database>,
  parentId: number,
  clientId: number,
): Promise<ClientRow | undefined> {
  const [row] = await subClientById(db, { parentId, clientId });
  return row;
}

// The parent's own row carries the count (kept by triggers, migrations/0006), so a page does not
// count the sub-clients, which cost a scan that grew with them (20 µs at 1,000, on every request).
const subClientCount = prepareQuery((db, param: Param<{ parentId: number }>) =>
  db.selectFrom('clients').select('sub_client_count').where('client_id', '=', param('parentId')),
);

export async function countSubClients(db: Kysely<Database>, parentId: number): Promise<number> {
  const [row] = await subClientCount(db, { parentId });
  return row ? Number(row.sub_client_count) : 0;
}

// LIMIT and OFFSET are casts of their parameters rather than bare parameters: SQLite plans a
// statement with a bare LIMIT parameter for the value bound, so every execution re-prepared it
// (a third of the query's time); with an expression it keeps one plan, the same index scan.
const subClientPage = prepareQuery((db, param: Param<{ parentId: number; limit: number; offset: number }>) =>
  db
    .selectFrom('clients')
    .select(COLUMNS)
    .where('parent_id', '=', param('parentId'))
    .orderBy('client_id')
    .limit(sql<number>`cast(${param('limit')} as integer)`)
    .offset(sql<number>`cast(${param('offset')} as integer)`),
);

export async function listSubClients(
  db: Kysely<Database>,
  parentId: number,
  limit: number,
  offset: number,
): Promise<ClientRow[]> {
  return subClientPage(db, { parentId, limit, offset });
}
