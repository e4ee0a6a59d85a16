import type { Kysely, Selectable } from 'kysely';
import { isAddress } from 'viem';
import { isUniqueViolation } from '../db/dialect.ts';
import type { ConsoleAdminsTable, Database } from '../db/schema.ts';
import { CofferError, conflict, notFound } from '../errors.ts';

export type ConsoleAdminRow = Selectable<ConsoleAdminsTable>;
export type ConsoleRole = ConsoleAdminsTable['role'];
export const CONSOLE_ROLES: readonly ConsoleRole[] = ['owner', 'operator', 'auditor'];

/**
 * Who an administrator is: the blind indexes of an e-mail address (under each key of the ring:
 * the first is the current key's, which new rows get) or a wallet address, lower case.
 */
export type AdminIdentity =
  | { emailIndexes: readonly string[]; wallet?: undefined }
  | { wallet: string; emailIndexes?: undefined };

export function roleOf(raw: string): ConsoleRole {
  if (!(CONSOLE_ROLES as readonly string[]).includes(raw))
    throw new CofferError('invalid_request', `The role must be one of ${CONSOLE_ROLES.join(', ')}.`);
  return raw as ConsoleRole;
}

export function walletIdentity(address: string): AdminIdentity {
  if (!isAddress(address, { strict: false }))
    throw new CofferError('invalid_request', 'The wallet address is not an Ethereum address.');
  return { wallet: address.toLowerCase() };
}

export async function insertAdmin(
  db: Kysely<Database>,
  clientId: number,
  identity: AdminIdentity,
  role: ConsoleRole,
  now = new Date(),
): Promise<ConsoleAdminRow> {
  try {
    return await db
      .insertInto('console_admins')
      .values({
        client_id: clientId,
        email_index: identity.emailIndexes?.[0] ?? null,
        wallet_address: identity.wallet ?? null,
        role,
        created_at: now.toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('That person is already an administrator of this client.');
    throw error;
  }
}

/** Removes the person's role at the client; the removed row, so its id can be recorded. */
export async function deleteAdmin(
  db: Kysely<Database>,
  clientId: number,
  identity: AdminIdentity,
): Promise<ConsoleAdminRow> {
  const row = await db
    .deleteFrom('console_admins')
    .where('client_id', '=', clientId)
    .where((eb) =>
      identity.wallet !== undefined
        ? eb('wallet_address', '=', identity.wallet)
        : eb('email_index', 'in', identity.emailIndexes),
    )
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notFound('That administrator');
  return row;
}

export function listAdmins(db: Kysely<Database>, clientId: number): Promise<ConsoleAdminRow[]> {
  return db
    .selectFrom('console_admins')
    .selectAll()
    .where('client_id', '=', clientId)
    .orderBy('id')
    .execute();
}

/** Every client the identity administers, oldest grant first. */
export function adminsOfIdentity(
  db: Kysely<Database>,
  identity: { emailIndexes: readonly string[]; wallet: string | null },
): Promise<(ConsoleAdminRow & { client_name: string })[]> {
  return db
    .selectFrom('console_admins')
    .innerJoin('clients', 'clients.client_id', 'console_admins.client_id')
    .selectAll('console_admins')
    .select('clients.name as client_name')
    .where((eb) => {
      const matches = [];
      if (identity.emailIndexes.length) matches.push(eb('email_index', 'in', identity.emailIndexes));
      if (identity.wallet !== null) matches.push(eb('wallet_address', '=', identity.wallet));
      // Nothing proven matches nothing.
      return matches.length ? eb.or(matches) : eb('console_admins.id', '<', 0);
    })
    .orderBy('console_admins.id')
    .execute();
}
