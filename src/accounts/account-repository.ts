import type { Kysely, Transaction } from 'kysely';
import {
  findWalletCredentials,
  type WalletCredentialRow,
} from '../credentials/held-credential-repository.ts';
import type { Dialect } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { emailSendBucket } from '../interaction/login-methods.ts';

/** The account of that id in the tenant, if any (erasure through the API). */
export async function findAccountInTenant(db: Kysely<Database>, userId: number, tenantId: number) {
  return db
    .selectFrom('users')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

/** What was deleted with an account: the blocks to remove and the issuers to tell. */
export interface DeletedAccount {
  blocks: string[];
  /** Credentials that came by OpenID4VCI with a notification endpoint (`credential_deleted`). */
  notify: WalletCredentialRow[];
}

async function blocksOf(trx: Transaction<Database>, userId: number, profileCid: string): Promise<string[]> {
  const credentials = await trx
    .selectFrom('credentials')
    .select(['cid', 'prepared_cid'])
    .where('user_id', '=', userId)
    .execute();
  const copies = await findCopyBlocks(trx, [userId]);
  const cids = [profileCid, ...[...copies.values()].flat()];
  for (const row of credentials) cids.push(row.cid, ...(row.prepared_cid === null ? [] : [row.prepared_cid]));
  return [...new Set(cids)];
}

/**
 * Deletes an account's row in one transaction; the foreign keys take every row that names it
 * (credentials and their copies, wallet history, sessions, codes, refresh tokens, the disclosed
 * claims of its access tokens, pending interactions and deferred issuances). Unfinished
 * interactions that name the person's wallet address or e-mail index but no account go too,
 * unless another account of theirs still has that identifier, and so does the e-mail's send
 * limit, which names its blind index. Returns undefined when the account was gone already (a
 * concurrent erasure).
 */
export async function deleteAccountRows(
  db: Kysely<Database>,
  dialect: Dialect,
  userId: number,
  endPrepared: (trx: Transaction<Database>) => Promise<void>,
  /** Runs once, after the account's row went: its audit event. */
  erased: (trx: Transaction<Database>) => Promise<void> = async () => {},
): Promise<DeletedAccount | undefined> {
  return db.transaction().execute(async (trx) => {
    // Taking the row first (a write that changes nothing) serialises concurrent erasures and a
    // credential arriving meanwhile on PostgreSQL; SQLite runs one writer anyway.
    const user = await trx
      .updateTable('users')
      .set({ user_id: userId })
      .where('user_id', '=', userId)
      .returning(['user_id', 'profile_cid', 'wallet_address', 'email_index'])
      .executeTakeFirst();
    if (!user) return undefined;
    // What was prepared for the person ends (offers). Its rows are locked before the account's
    // FOR UPDATE, in the order an issuance takes them (offer, then a key share of the account),
    // so the two never deadlock. On PostgreSQL a row made for the account meanwhile (it takes a
    // key share, which FOR UPDATE waits out and then holds back) is caught by a second pass.
    await endPrepared(trx);
    if (dialect === 'postgres') {
      await trx.selectFrom('users').select('user_id').where('user_id', '=', userId).forUpdate().execute();
      await endPrepared(trx);
    }
    const blocks = await blocksOf(trx, userId, user.profile_cid);
    const notify = (await findWalletCredentials(trx, [userId])).filter((row) => row.notification_sealed);
    await trx.deleteFrom('users').where('user_id', '=', userId).execute();
    await erased(trx);
    for (const [column, value] of [
      ['identity_wallet', user.wallet_address],
      ['identity_email_index', user.email_index],
    ] as const) {
      if (value === null) continue;
      const owner = column === 'identity_wallet' ? 'wallet_address' : 'email_index';
      const shared = await trx
        .selectFrom('users')
        .select('user_id')
        .where(owner, '=', value)
        .executeTakeFirst();
      if (shared) continue;
      await trx.deleteFrom('interactions').where(column, '=', value).execute();
      // The e-mail's send limit names its blind index for an hour.
      if (column === 'identity_email_index')
        await trx.deleteFrom('rate_limits').where('bucket', '=', emailSendBucket(value)).execute();
    }
    return { blocks, notify };
  });
}

/** The accounts' own rows for a person's export, with their tenants' names. */
export async function findExportedAccounts(db: Kysely<Database>, userIds: number[]) {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('users')
    .innerJoin('clients', 'clients.client_id', 'users.tenant_id')
    .select([
      'users.user_id',
      'users.did',
      'users.tenant_id',
      'clients.name as tenant_name',
      'users.created_at',
      'users.email_verified',
      'users.wallet_address',
      'users.profile_cid',
    ])
    .where('users.user_id', 'in', userIds)
    .orderBy('users.user_id')
    .execute();
}

/** The blocks of the copies of the accounts' credentials (batch issuance), by credential. */
export async function findCopyBlocks(
  db: Kysely<Database>,
  userIds: number[],
): Promise<Map<number, string[]>> {
  const copies = new Map<number, string[]>();
  if (userIds.length === 0) return copies;
  const rows = await db
    .selectFrom('credential_copies')
    .innerJoin('credentials', 'credentials.credential_pk', 'credential_copies.credential_pk')
    .select(['credential_copies.credential_pk', 'credential_copies.cid'])
    .where('credentials.user_id', 'in', userIds)
    .orderBy('credential_copies.copy_index')
    .execute();
  for (const row of rows) copies.set(row.credential_pk, [...(copies.get(row.credential_pk) ?? []), row.cid]);
  return copies;
}
