import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { ConsoleSessionsTable, Database } from '../db/schema.ts';
import { readCookie } from '../http/cookies.ts';
import { hashSecret } from '../keys/secrets.ts';

export type ConsoleSessionRow = Selectable<ConsoleSessionsTable>;

/** Its own cookie, apart from the person's `coffer_session`: signing out of one leaves the other. */
export const CONSOLE_COOKIE = 'coffer_console';

/** A working day: an administrator's session is worth more to a thief than a person's. */
export const CONSOLE_SESSION_TTL_MS = 8 * 3600_000;

/** Starts a session for the proven identity; returns the cookie's value (only its hash is kept). */
export async function startConsoleSession(
  db: Kysely<Database>,
  identity: { emailIndex: string | null; wallet: string | null },
  now = new Date(),
): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  // Sessions that ended are deleted by the minute sweep (oidc/expired-rows.ts), not here.
  await db
    .insertInto('console_sessions')
    .values({
      id_hash: hashSecret(sessionId),
      email_index: identity.emailIndex,
      wallet_address: identity.wallet,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + CONSOLE_SESSION_TTL_MS).toISOString(),
    })
    .execute();
  return sessionId;
}

export async function consoleSessionOfCookie(
  db: Kysely<Database>,
  cookieHeader: string | undefined,
  now = new Date(),
): Promise<ConsoleSessionRow | undefined> {
  const sessionId = readCookie(cookieHeader, CONSOLE_COOKIE);
  if (!sessionId) return undefined;
  return db
    .selectFrom('console_sessions')
    .selectAll()
    .where('id_hash', '=', hashSecret(sessionId))
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
}

export async function endConsoleSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
}
