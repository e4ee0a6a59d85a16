import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

/** What the wallet page and deletion read of credentials, for one person's accounts. */
const WALLET_COLUMNS = [
  'credentials.credential_pk',
  'credentials.credential_id',
  'credentials.cid',
  'credentials.format',
  'credentials.issuer_client_id',
  'credentials.credential_issuer',
  'credentials.issuer_display_sealed',
  'credentials.notification_sealed',
  'credentials.created_at',
  'users.user_id',
  'users.did',
  'users.tenant_id',
] as const;

/** The credentials of the given accounts, newest first: all of them, or the newest `limit`. */
export async function findWalletCredentials(
  db: Kysely<Database>,
  userIds: number[],
  limit: number | null = null,
) {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('credentials')
    .innerJoin('users', 'users.user_id', 'credentials.user_id')
    .select(WALLET_COLUMNS)
    .where('credentials.user_id', 'in', userIds)
    .orderBy('credentials.credential_pk', 'desc')
    .$if(limit !== null, (query) => query.limit(limit!))
    .execute();
}

/** How many credentials each of the given accounts holds (accounts with none are absent). */
export async function countWalletCredentials(
  db: Kysely<Database>,
  userIds: number[],
): Promise<Map<number, number>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('credentials')
    .select(['user_id', (eb) => eb.fn.countAll<number | string | bigint>().as('held')])
    .where('user_id', 'in', userIds)
    .groupBy('user_id')
    .execute();
  return new Map(rows.map((row) => [Number(row.user_id), Number(row.held)]));
}

export type WalletCredentialRow = Awaited<ReturnType<typeof findWalletCredentials>>[number];

/** One credential, only when it belongs to one of the given accounts. */
export async function findWalletCredential(
  db: Kysely<Database>,
  userIds: number[],
  which: { credentialPk: number } | { credentialId: string },
): Promise<WalletCredentialRow | undefined> {
  if (userIds.length === 0) return undefined;
  let query = db
    .selectFrom('credentials')
    .innerJoin('users', 'users.user_id', 'credentials.user_id')
    .select(WALLET_COLUMNS)
    .where('credentials.user_id', 'in', userIds);
  query =
    'credentialPk' in which
      ? query.where('credentials.credential_pk', '=', which.credentialPk)
      : query.where('credentials.credential_id', '=', which.credentialId);
  return query.executeTakeFirst();
}

/**
 * Deletes a credential and its copies in one transaction; returns the CIDs of every block it
 * had, or undefined when a concurrent deletion took it first.
 */
export async function deleteCredentialRow(
  db: Kysely<Database>,
  credentialPk: number,
  deleted: (trx: Kysely<Database>) => Promise<void> = async () => {},
) {
  return db.transaction().execute(async (trx) => {
    const copies = await trx
      .selectFrom('credential_copies')
      .select('cid')
      .where('credential_pk', '=', credentialPk)
      .execute();
    await trx.deleteFrom('credential_copies').where('credential_pk', '=', credentialPk).execute();
    const row = await trx
      .deleteFrom('credentials')
      .where('credential_pk', '=', credentialPk)
      .returning(['cid', 'prepared_cid'])
      .executeTakeFirst();
    if (!row) return undefined;
    await deleted(trx);
    const prepared = row.prepared_cid === null ? [] : [row.prepared_cid];
    return [...new Set([row.cid, ...prepared, ...copies.map((copy) => copy.cid)])];
  });
}

/** The names of the API clients that stored credentials (the wallet page's "from"). */
export async function findClientNames(db: Kysely<Database>, clientIds: number[]) {
  if (clientIds.length === 0) return new Map<number, string>();
  const rows = await db
    .selectFrom('clients')
    .select(['client_id', 'name'])
    .where('client_id', 'in', clientIds)
    .execute();
  return new Map(rows.map((row) => [row.client_id, row.name]));
}
