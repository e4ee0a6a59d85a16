import type { Kysely } from 'kysely';
import type { HistoryEntry, HistoryEvent } from '../credentials/history-events.ts';
import type { Database } from '../db/schema.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';

/**
 * The wallet's history (DESIGN.md, The person's wallet): each presentation and each arrival of a
 * credential, one row per account and event. Only the kind and the time are plain; what was
 * shared, with whom and from whom is sealed to the account (field cipher, the account's DID in
 * the associated data), so a row read into another account does not decrypt.
 */

export const historyContext = (did: string) => `wallet-history/${did}`;

/** How much history the page shows; older events stay in the database. */
export const HISTORY_SHOWN = 200;

/** Events of one or several accounts, written in one statement. */
export async function recordHistory(
  deps: { db: Kysely<Database>; cipher: FieldCipher },
  entries: HistoryEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  await deps.db
    .insertInto('wallet_history')
    .values(
      entries.map(({ account, event }) => ({
        user_id: account.user_id,
        kind: event.kind,
        at: event.at,
        detail_sealed: deps.cipher.encrypt(JSON.stringify(event), historyContext(account.did)),
      })),
    )
    .execute();
}

/** The newest events of the given accounts, newest first; all of them with a null limit (the export). */
export async function readHistory(
  deps: { db: Kysely<Database>; cipher: FieldCipher },
  accounts: Array<{ user_id: number; did: string }>,
  limit: number | null = HISTORY_SHOWN,
): Promise<HistoryEvent[]> {
  if (accounts.length === 0) return [];
  const didOf = new Map(accounts.map((a) => [a.user_id, a.did]));
  const rows = await deps.db
    .selectFrom('wallet_history')
    .select(['user_id', 'detail_sealed'])
    .where('user_id', 'in', [...didOf.keys()])
    .orderBy('history_pk', 'desc')
    .$if(limit !== null, (query) => query.limit(limit!))
    .execute();
  return rows.map(
    (row) =>
      JSON.parse(
        deps.cipher.decrypt(row.detail_sealed, historyContext(didOf.get(row.user_id)!)),
      ) as HistoryEvent,
  );
}
