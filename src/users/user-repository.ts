import type { Insertable, Kysely } from 'kysely';
import type { Audit, AuditActor } from '../audit/audit-events.ts';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit } from '../db/group-commit.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type { Database, UsersTable } from '../db/schema.ts';

export type NewUserRow = Insertable<UsersTable>;

// User creation runs these on every request, so they are compiled once (db/prepared-query.ts).
const userInsert = prepareQuery((db, param: Param<Required<Omit<NewUserRow, 'user_id'>>>) =>
  db
    .insertInto('users')
    .values({
      tenant_id: param('tenant_id'),
      email_index: param('email_index'),
      email_verified: param('email_verified'),
      wallet_address: param('wallet_address'),
      wallet_chain_id: param('wallet_chain_id'),
      profile_cid: param('profile_cid'),
      did: param('did'),
      holder_key_sealed: param('holder_key_sealed'),
      created_at: param('created_at'),
    })
    .returning('user_id'),
);

export async function insertUser(db: Kysely<Database>, user: NewUserRow): Promise<number> {
  const [row] = await userInsert(db, {
    ...user,
    email_index: user.email_index ?? null,
    email_verified: user.email_verified ?? 0,
    wallet_address: user.wallet_address ?? null,
    wallet_chain_id: user.wallet_chain_id ?? null,
  });
  return row!.user_id;
}

/** Inserts a user and resolves with its id once the row is durable; rejects as insertUser does. */
export type UserInserter = (user: NewUserRow, by?: UserCreator) => Promise<number>;

/** Who creates the user, for its `user.create` audit event; a person signing up when no actor. */
export interface UserCreator {
  actor?: AuditActor;
  requestId?: string;
}

/** insertUser with group commit on SQLite (db/group-commit.ts), and its audit event in the same write. */
export function createUserInserter(db: Kysely<Database>, dialect: Dialect, audit?: Audit): UserInserter {
  const commit = createGroupCommit(
    db,
    dialect,
    async (tx, { user, by }: { user: NewUserRow; by?: UserCreator }) => {
      const userId = await insertUser(tx, user);
      const event = { clientId: user.tenant_id, type: 'user.create', targets: { user_id: userId } };
      await audit?.record(tx, { ...event, actor: by?.actor ?? `person:${userId}`, requestId: by?.requestId });
      return userId;
    },
  );
  return (user, by) => commit(by ? { user, by } : { user });
}

// No LIMIT: the unique indexes (tenant, e-mail) and (tenant, wallet) allow two rows at most, and
// SQLite re-prepares a statement with a LIMIT parameter on every execution.
const takenEmail = prepareQuery((db, param: Param<{ tenantId: number; emailIndex: string }>) =>
  db
    .selectFrom('users')
    .select(['email_index', 'wallet_address'])
    .where('tenant_id', '=', param('tenantId'))
    .where('email_index', '=', param('emailIndex')),
);

const takenEmailOrWallet = prepareQuery(
  (db, param: Param<{ tenantId: number; emailIndex: string; walletAddress: string }>) =>
    db
      .selectFrom('users')
      .select(['email_index', 'wallet_address'])
      .where('tenant_id', '=', param('tenantId'))
      .where((eb) =>
        eb.or([
          eb('email_index', '=', param('emailIndex')),
          eb('wallet_address', '=', param('walletAddress')),
        ]),
      ),
);

/** While a master-key rotation runs, an e-mail has an index under each key of the ring. */
function takenUnderAnyKey(
  db: Kysely<Database>,
  tenantId: number,
  emailIndexes: readonly string[],
  walletAddress: string | undefined,
) {
  return db
    .selectFrom('users')
    .select(['email_index', 'wallet_address'])
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('email_index', 'in', emailIndexes),
        ...(walletAddress === undefined ? [] : [eb('wallet_address', '=', walletAddress)]),
      ]),
    )
    .execute();
}

/**
 * Which of the e-mail and the wallet a user of the tenant already has, if any. `emailIndexes` is
 * the e-mail's index under every master key of the ring (keys/blind-index.ts), the current first.
 */
export async function findTakenIdentifiers(
  db: Kysely<Database>,
  tenantId: number,
  emailIndexes: readonly string[],
  walletAddress: string | undefined,
): Promise<{ email: boolean; wallet: boolean }> {
  const rows =
    emailIndexes.length > 1
      ? await takenUnderAnyKey(db, tenantId, emailIndexes, walletAddress)
      : walletAddress === undefined
        ? await takenEmail(db, { tenantId, emailIndex: emailIndexes[0]! })
        : await takenEmailOrWallet(db, { tenantId, emailIndex: emailIndexes[0]!, walletAddress });
  return {
    email: rows.some((row) => row.email_index !== null && emailIndexes.includes(row.email_index)),
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

// Every bearer check runs it (db/prepared-query.ts).
const selectUserById = prepareQuery((db, param: Param<{ userId: number }>) =>
  db.selectFrom('users').select(IDENTITY).where('user_id', '=', param('userId')),
);

export async function findUserById(db: Kysely<Database>, userId: number): Promise<UserIdentity | undefined> {
  return (await selectUserById(db, { userId }))[0];
}

/** The user of the tenant with the e-mail: its index under any key of the ring, current first. */
export async function findUserByEmailIndex(
  db: Kysely<Database>,
  tenantId: number,
  emailIndexes: readonly string[],
) {
  return db
    .selectFrom('users')
    .select(IDENTITY)
    .where('tenant_id', '=', tenantId)
    .where('email_index', 'in', emailIndexes)
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
  identity: {
    wallet?: string | null | undefined;
    emailIndex?: string | null | undefined;
    /** The e-mail's index under every key of the ring, when the e-mail itself was just proven. */
    emailIndexes?: readonly string[] | undefined;
  },
): Promise<Array<UserIdentity & { email_index: string | null }>> {
  if (!identity.wallet && !identity.emailIndex) return [];
  const emailIndexes = identity.emailIndexes ?? (identity.emailIndex ? [identity.emailIndex] : []);
  return db
    .selectFrom('users')
    .select([...IDENTITY, 'email_index'])
    .where((eb) =>
      eb.or([
        ...(identity.wallet ? [eb('wallet_address', '=', identity.wallet)] : []),
        ...(emailIndexes.length > 0 ? [eb('email_index', 'in', emailIndexes)] : []),
      ]),
    )
    .orderBy('user_id')
    .limit(50)
    .execute();
}

/** What a session proved of its account: the wallet address and the e-mail blind index. */
export async function findAccountIdentifiers(db: Kysely<Database>, userId: number) {
  return db
    .selectFrom('users')
    .select(['user_id', 'wallet_address', 'email_index'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The sealed holder keys of the given accounts. */
export async function findHolderKeys(db: Kysely<Database>, userIds: number[]) {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('users')
    .select(['user_id', 'did', 'holder_key_sealed'])
    .where('user_id', 'in', userIds)
    .execute();
}
