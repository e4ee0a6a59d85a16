import type { Kysely } from 'kysely';
import { now } from '../../../db/dialect.ts';
import type { Database } from '../../../db/schema.ts';

export interface RegisteredContext {
  url: string;
  document: string;
  sha256: string;
}

export async function findRegisteredContext(
  db: Kysely<Database>,
  url: string,
): Promise<RegisteredContext | undefined> {
  return db
    .selectFrom('jsonld_contexts')
    .select(['url', 'document', 'sha256'])
    .where('url', '=', url)
    .executeTakeFirst();
}

export async function insertRegisteredContext(
  db: Kysely<Database>,
  context: RegisteredContext,
): Promise<void> {
  await db
    .insertInto('jsonld_contexts')
    .values({ ...context, created_at: now() })
    .execute();
}
