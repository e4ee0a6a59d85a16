import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { readCookie } from '../http/cookies.ts';
import { hashSecret } from '../keys/secrets.ts';
import { deleteSession, findLiveSession, type SessionRow } from './session-repository.ts';

/** The browser session (single sign-on for log-ins, the person's identity for the wallet). */
export const SESSION_COOKIE = 'coffer_session';

/** The live session a request's Cookie header names; undefined without one. */
export async function sessionOfCookie(
  db: Kysely<Database>,
  cookieHeader: string | undefined,
): Promise<SessionRow | undefined> {
  const sessionId = readCookie(cookieHeader, SESSION_COOKIE);
  return sessionId ? findLiveSession(db, hashSecret(sessionId)) : undefined;
}

/** Ends the session the Cookie header names, if any (sign-out); the caller expires the cookie. */
export async function endSessionOfCookie(
  db: Kysely<Database>,
  cookieHeader: string | undefined,
): Promise<void> {
  const sessionId = readCookie(cookieHeader, SESSION_COOKIE);
  if (sessionId) await deleteSession(db, hashSecret(sessionId));
}
