import type { Insertable, Kysely } from 'kysely';
import type { Database, UsersTable } from '../db/schema.ts';

export type NewUserRow = Insertable<UsersTable>;

export async function insertUser(db: Kysely<Database>, user: NewUserRow): Promise<number> {
  const row = await db.insertInto('users').values(user).returning('user_id').executeTakeFirstOrThrow();
  return row.user_id;
}

/** Which of the e-mail and the wallet a user of the tenant already has, if any. */
export async function findTakenIdentifiers(
  db: Kysely<Database>,
  tenantId: number,
  emailIndex: string,
  walletAddress: string | undefined,
): Promise<{ email: boolean; wallet: boolean }> {
  const rows = await db
    .selectFrom('users')
    .select(['email_index', 'wallet_address'])
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      walletAddress === undefined
        ? eb('email_index', '=', emailIndex)
        : eb.or([eb('email_index', '=', emailIndex), eb('wallet_address', '=', walletAddress)]),
    )
    .limit(2)
    .execute();
  return {
    email: rows.some((row) => row.email_index === emailIndex),
    wallet: walletAddress !== undefined && rows.some((row) => row.wallet_address === walletAddress),
  };
}

/** What log-in and tokens need of a user; no personal data (that is in the profile block). */
export interface UserIdentity {
  user_id: number;
  tenant_id: number;
  did: string;
  wallet_address: string | null;
  profile_cid: string;
  email_verified: 0 | 1;
}

const IDENTITY = ['user_id', 'tenant_id', 'did', 'wallet_address', 'profile_cid', 'email_verified'] as const;

export async function findUserById(db: Kysely<Database>, userId: number): Promise<UserIdentity | undefined> {
  return db.selectFrom('users').select(IDENTITY).where('user_id', '=', userId).executeTakeFirst();
}

export async function findUserByEmailIndex(db: Kysely<Database>, tenantId: number, emailIndex: string) {
  return db
    .selectFrom('users')
    .select(IDENTITY)
    .where('tenant_id', '=', tenantId)
    .where('email_index', '=', emailIndex)
    .executeTakeFirst();
}

export async function findUserByWallet(db: Kysely<Database>, tenantId: number, walletAddress: string) {
  return db
    .selectFrom('users')
    .select(IDENTITY)
    .where('tenant_id', '=', tenantId)
    .where('wallet_address', '=', walletAddress)
    .executeTakeFirst();
}

export async function markEmailVerified(db: Kysely<Database>, userId: number): Promise<void> {
  await db.updateTable('users').set({ email_verified: 1 }).where('user_id', '=', userId).execute();
}

export async function findUserByDid(db: Kysely<Database>, did: string): Promise<UserIdentity | undefined> {
  return db.selectFrom('users').select(IDENTITY).where('did', '=', did).executeTakeFirst();
}

/**
 * Users with this wallet on this chain in the tenants a client speaks for: its own, and those
 * of its sub-clients. (A wallet address given at sign-up is not proof of control, so a wallet
 * never reaches into another organisation's accounts.)
 */
export async function findUsersByWalletInTenantsOf(
  db: Kysely<Database>,
  clientId: number,
  walletAddress: string,
  chainId: string,
): Promise<UserIdentity[]> {
  return db
    .selectFrom('users')
    .innerJoin('clients', 'clients.client_id', 'users.tenant_id')
    .select(IDENTITY.map((column) => `users.${column}` as const))
    .where('users.wallet_address', '=', walletAddress)
    .where('users.wallet_chain_id', '=', chainId)
    .where((eb) => eb.or([eb('users.tenant_id', '=', clientId), eb('clients.parent_id', '=', clientId)]))
    .limit(2)
    .execute();
}

/**
 * Every account of a person who proved a wallet address or an e-mail address, in any tenant:
 * the hosted wallet belongs to the person (DESIGN.md, Hosted wallet). Oldest first.
 */
export async function findAccountsOfIdentity(
  db: Kysely<Database>,
  identity: { wallet?: string | null | undefined; emailIndex?: string | null | undefined },
): Promise<UserIdentity[]> {
  if (!identity.wallet && !identity.emailIndex) return [];
  return db
    .selectFrom('users')
    .select(IDENTITY)
    .where((eb) =>
      eb.or([
        ...(identity.wallet ? [eb('wallet_address', '=', identity.wallet)] : []),
        ...(identity.emailIndex ? [eb('email_index', '=', identity.emailIndex)] : []),
      ]),
    )
    .orderBy('user_id')
    .limit(50)
    .execute();
}
