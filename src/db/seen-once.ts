import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Remembers a value once per party (a verifier's nonce, OpenID4VP §14.1; a credential offer);
 * false when it was seen before, so a request is answered once.
 * Expired values of the same party are dropped on the way.
 */
export async function rememberNonce(
  db: Kysely<Database>,
  verifier: string,
  nonce: string,
  nowSeconds: number,
  lifetimeSeconds: number,
): Promise<boolean> {
  await db
    .deleteFrom('verifier_nonces')
    .where('verifier', '=', verifier)
    .where('expires_at', '<', nowSeconds)
    .execute();
  const inserted = await db
    .insertInto('verifier_nonces')
    .values({ verifier, nonce, expires_at: nowSeconds + lifetimeSeconds })
    .onConflict((oc) => oc.columns(['verifier', 'nonce']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}
