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
