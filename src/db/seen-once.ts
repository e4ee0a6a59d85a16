import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Remembers a value once per party (a verifier's nonce, OpenID4VP §14.1; a credential offer);
 * false when it was seen before and is still within its lifetime, so a request is answered once.
 * A value past its lifetime is taken afresh by this same statement (the expiry is part of the
 * check, not left to a cleanup), atomically under concurrency: the unique (verifier, nonce) key
 * lets one of two racing callers insert or update it. Expired rows of other values are left to
 * the periodic sweep (oidc/expired-rows.ts), so a call costs the same however many a party has.
 */
export async function rememberNonce(
  db: Kysely<Database>,
  verifier: string,
  nonce: string,
  nowSeconds: number,
  lifetimeSeconds: number,
): Promise<boolean> {
  const expiresAt = nowSeconds + lifetimeSeconds;
  const taken = await db
    .insertInto('verifier_nonces')
    .values({ verifier, nonce, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .columns(['verifier', 'nonce'])
        .doUpdateSet({ expires_at: expiresAt })
        .where('verifier_nonces.expires_at', '<', nowSeconds),
    )
    .executeTakeFirst();
  return Number(taken.numInsertedOrUpdatedRows ?? 0) === 1;
}
