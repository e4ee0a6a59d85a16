import type { FastifyInstance } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';

/** Rows one sweep statement deletes at most: a short lock, and other writers go in between. */
export const SWEEP_BATCH = 1000;

/** Each swept table, with the key its batches are chosen by (its primary key). */
const SWEPT: ReadonlyArray<[table: keyof Database, key: readonly string[]]> = [
  ['dpop_proofs', ['proof_key']],
  ['pushed_requests', ['uri_hash']],
  ['refresh_tokens', ['token_hash']],
  ['revoked_tokens', ['jti']],
  ['access_token_claims', ['jti']],
  ['verifier_nonces', ['verifier', 'nonce']],
];

/**
 * Deletes the table's rows that expired before `before`, SWEEP_BATCH at a time. Each batch is
 * found through the table's expires_at index (migration 0022), so a sweep is linear in the
 * expired rows only, never in the table's size.
 */
async function deleteExpired(
  db: Kysely<Database>,
  table: string,
  key: readonly string[],
  before: number | string,
  batch: number,
): Promise<void> {
  const columns = sql.join(key.map((column) => sql.ref(column)));
  for (;;) {
    const result = await sql`
      delete from ${sql.table(table)} where (${columns}) in (
        select ${columns} from ${sql.table(table)} where expires_at < ${before} limit ${batch})`.execute(db);
    if (Number(result.numAffectedRows ?? 0) < batch) return;
  }
}

/**
 * Rows that only ever matter until a moment passes: DPoP proof ids (one per DPoP request),
 * pushed requests, refresh-token families past their end, revocations of tokens that have
 * expired anyway, the disclosed claims kept for expired access tokens, values remembered once per
 * party (db/seen-once.ts), console sessions that ended, and codes once the tokens they gave have
 * expired (a replay until then still revokes them). Deleting them keeps those tables the size of the last hour's traffic.
 */
export async function sweepExpiredRows(
  db: Kysely<Database>,
  nowSeconds: number,
  accessTokenTtl: number,
  batch = SWEEP_BATCH,
): Promise<void> {
  for (const [table, key] of SWEPT) await deleteExpired(db, table, key, nowSeconds, batch);
  await deleteExpired(db, 'authorization_codes', ['code_hash'], nowSeconds - accessTokenTtl, batch);
  // Console sessions keep their end as an ISO time, as the other page sessions do.
  const nowIso = new Date(nowSeconds * 1000).toISOString();
  await deleteExpired(db, 'console_sessions', ['id_hash'], nowIso, batch);
}

const SWEEP_EVERY_MS = 60_000;

/** Every instance sweeps; the deletes are idempotent, so several at once do no harm. */
export function startExpiredRowSweeper(
  app: FastifyInstance,
  db: Kysely<Database>,
  accessTokenTtl: number,
): void {
  const timer = setInterval(() => {
    sweepExpiredRows(db, Math.floor(Date.now() / 1000), accessTokenTtl).catch((error: unknown) =>
      app.log.warn({ err: error }, 'sweeping expired rows failed'),
    );
  }, SWEEP_EVERY_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
