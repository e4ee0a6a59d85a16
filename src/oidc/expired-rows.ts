import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { deleteExpiredInBatches, SWEEP_BATCH } from '../db/expired-batches.ts';
import type { Database } from '../db/schema.ts';

export { SWEEP_BATCH };

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
 * Rows that only ever matter until a moment passes: DPoP proof ids (one per DPoP request),
 * pushed requests, refresh-token families past their end, revocations of tokens that have
 * expired anyway, the disclosed claims kept for expired access tokens, values remembered once per
 * party (db/seen-once.ts), log-in interactions past their time (an e-mail log-in's with the sealed
 * address), people's and console sessions that ended, and codes once the tokens they gave have
 * expired (a replay until then still revokes them). Deleting them keeps those tables the size of
 * the last hour's traffic (a session's, of its lifetime's).
 */
export async function sweepExpiredRows(
  db: Kysely<Database>,
  nowSeconds: number,
  accessTokenTtl: number,
  batch = SWEEP_BATCH,
): Promise<void> {
  for (const [table, key] of SWEPT) await deleteExpiredInBatches(db, table, key, nowSeconds, batch);
  await deleteExpiredInBatches(db, 'authorization_codes', ['code_hash'], nowSeconds - accessTokenTtl, batch);
  // Interactions and page sessions (a person's, a console administrator's) keep their end as an
  // ISO time. An expired interaction is already answered as gone, as an unknown one is.
  const nowIso = new Date(nowSeconds * 1000).toISOString();
  await deleteExpiredInBatches(db, 'interactions', ['id'], nowIso, batch);
  await deleteExpiredInBatches(db, 'sessions', ['id_hash'], nowIso, batch);
  await deleteExpiredInBatches(db, 'console_sessions', ['id_hash'], nowIso, batch);
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
