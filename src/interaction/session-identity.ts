import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { findAccountIdentifiers } from '../users/user-repository.ts';
import type { NewInteraction } from './interaction-service.ts';
import type { SessionRow } from './session-repository.ts';

/** The identity a live session proved: its account's wallet (wallet log-in) or e-mail (e-mail log-in). */
export async function identityOfSession(
  deps: { db: Kysely<Database> },
  session: SessionRow | undefined,
): Promise<NewInteraction['identity']> {
  if (!session) return undefined;
  const account = await findAccountIdentifiers(deps.db, session.user_id);
  if (!account) return undefined;
  const wallet = session.login_type === 'wallet' ? account.wallet_address : null;
  const emailIndex = session.login_type === 'email' ? account.email_index : null;
  if (!wallet && !emailIndex) return undefined;
  return { wallet, emailIndex, userId: account.user_id };
}
