import type { Kysely, Selectable } from 'kysely';
import { now } from '../db/dialect.ts';
import type { ClientsTable, Database } from '../db/schema.ts';
import type { SubClientFields } from './subclient-rules.ts';

export type ClientRow = Selectable<ClientsTable>;

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
    .returningAll()
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
    .returningAll()
    .executeTakeFirst();
}

export async function findSubClient(
  db: Kysely<Database>,
  parentId: number,
  clientId: number,
): Promise<ClientRow | undefined> {
  return db
    .selectFrom('clients')
    .selectAll()
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
    .selectAll()
    .where('parent_id', '=', parentId)
    .orderBy('client_id')
    .limit(limit)
    .offset(offset)
    .execute();
}
