import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** The tables that queue signed callback events, and the column naming what each event is about. */
const SUBJECT_OF = { verifier_callbacks: 'request_id', issuer_callbacks: 'offer_id' } as const;
type CallbackTable = keyof typeof SUBJECT_OF;

/** A callback queue in one of those tables (http/signed-callbacks.ts delivers from it). */
export function callbackQueue(db: Kysely<Database>, table: CallbackTable) {
  const subject = SUBJECT_OF[table];
  return {
    async add(row: { subject: string; url: string; event: string; next_attempt_at: string }) {
      const { subject: value, ...rest } = row;
      await db
        .insertInto(table)
        .values({ ...rest, [subject]: value } as never)
        .execute();
    },
    async due(nowIso: string, limit: number) {
      const rows = await db
        .selectFrom(table)
        .select(['callback_pk', 'url', 'event', 'attempts', subject as never])
        .where('next_attempt_at', '<=', nowIso)
        .orderBy('next_attempt_at')
        .limit(limit)
        .execute();
      return (rows as unknown as Record<string, unknown>[]).map((r) => ({
        callback_pk: r['callback_pk'] as number,
        url: r['url'] as string,
        event: r['event'] as string,
        attempts: r['attempts'] as number,
        subject: r[subject] as string,
      }));
    },
    async remove(pk: number) {
      await db.deleteFrom(table).where('callback_pk', '=', pk).execute();
    },
    async reschedule(pk: number, attempts: number, nextIso: string) {
      await db
        .updateTable(table)
        .set({ attempts, next_attempt_at: nextIso })
        .where('callback_pk', '=', pk)
        .execute();
    },
  };
}
