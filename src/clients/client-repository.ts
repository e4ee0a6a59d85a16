import type { Kysely } from 'kysely';
import { now } from '../db/dialect.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type { Database, Flag } from '../db/schema.ts';
import { hashSecret } from '../keys/secrets.ts';

/** The client an API token belongs to, as the API needs it to decide what the caller may do. */
export interface ApiCaller {
  clientId: number;
  isMaster: boolean;
  parentId: number | null;
}

// Every API request runs this, so it is compiled once rather than built per request. It reads the
// database every time: a token revoked by the CLI (another process) stops working at once.
const callerByTokenHash = prepareQuery((db, param: Param<{ tokenHash: string }>) =>
  db
    .selectFrom('api_tokens')
    .innerJoin('clients', 'clients.client_id', 'api_tokens.client_id')
    .select(['clients.client_id', 'clients.is_master', 'clients.parent_id'])
    .where('api_tokens.token_hash', '=', param('tokenHash'))
    .where('api_tokens.revoked_at', 'is', null),
);

export async function findCallerByApiToken(
  db: Kysely<Database>,
  token: string,
): Promise<ApiCaller | undefined> {
  const [row] = await callerByTokenHash(db, { tokenHash: hashSecret(token) });
  return row && { clientId: row.client_id, isMaster: row.is_master === 1, parentId: row.parent_id };
}

export interface NewClient {
  name: string;
  isMaster: boolean;
  isVerifier: boolean;
  parentId: number | null;
  clientSecretHash: string | null;
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  grantTypes?: string[];
  dpopBound?: boolean;
  requirePar?: boolean;
}

export async function insertClient(db: Kysely<Database>, client: NewClient): Promise<number> {
  const row = await db
    .insertInto('clients')
    .values({
      name: client.name,
      is_master: flag(client.isMaster),
      is_verifier: flag(client.isVerifier),
      parent_id: client.parentId,
      client_secret_hash: client.clientSecretHash,
      redirect_uris: JSON.stringify(client.redirectUris),
      post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris ?? []),
      grant_types: JSON.stringify(client.grantTypes ?? ['authorization_code']),
      dpop_bound: flag(client.dpopBound ?? false),
      require_par: flag(client.requirePar ?? false),
      created_at: now(),
    })
    .returning('client_id')
    .executeTakeFirstOrThrow();
  return row.client_id;
}

// Every token request and API call names its client (db/prepared-query.ts).
const selectClient = prepareQuery((db, param: Param<{ clientId: number }>) =>
  db.selectFrom('clients').selectAll().where('client_id', '=', param('clientId')),
);

export async function findClient(db: Kysely<Database>, clientId: number) {
  return (await selectClient(db, { clientId }))[0];
}

export async function insertApiToken(db: Kysely<Database>, clientId: number, token: string): Promise<void> {
  await db
    .insertInto('api_tokens')
    .values({ token_hash: hashSecret(token), client_id: clientId, created_at: now(), revoked_at: null })
    .execute();
}

/** Returns false when no live token has that value. */
export async function revokeApiToken(db: Kysely<Database>, token: string): Promise<boolean> {
  return (await revokeApiTokenOf(db, token)) !== undefined;
}

/** Revokes a live token; gives the client it belonged to (for the audit trail), or undefined. */
export async function revokeApiTokenOf(db: Kysely<Database>, token: string): Promise<number | undefined> {
  const row = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now() })
    .where('token_hash', '=', hashSecret(token))
    .where('revoked_at', 'is', null)
    .returning('client_id')
    .executeTakeFirst();
  return row?.client_id;
}

export const flag = (value: boolean): Flag => (value ? 1 : 0);
