import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

/**
 * Rows that only ever matter until a moment passes: DPoP proof ids (one per DPoP request),
 * pushed requests, refresh-token families past their end, revocations of tokens that have
 * expired anyway, the disclosed claims kept for expired access tokens, and codes once the tokens
 * they gave have expired (a replay until then still revokes them). Deleting them keeps those tables the size of the last hour's traffic.
 */
export async function sweepExpiredRows(
  db: Kysely<Database>,
  nowSeconds: number,
  accessTokenTtl: number,
): Promise<void> {
  await db.deleteFrom('dpop_proofs').where('expires_at', '<', nowSeconds).execute();
  await db.deleteFrom('pushed_requests').where('expires_at', '<', nowSeconds).execute();
  await db.deleteFrom('refresh_tokens').where('expires_at', '<', nowSeconds).execute();
  await db.deleteFrom('revoked_tokens').where('expires_at', '<', nowSeconds).execute();
  await db.deleteFrom('access_token_claims').where('expires_at', '<', nowSeconds).execute();
  await db
    .deleteFrom('authorization_codes')
    .where('expires_at', '<', nowSeconds - accessTokenTtl)
    .execute();
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
