import type { Kysely } from 'kysely';
import type { Audit } from '../audit/audit-events.ts';
import type { Database } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { EncryptedStore } from '../storage/index.ts';
import type { UserIdentity } from '../users/user-repository.ts';
import {
  deleteCredentialRow,
  findWalletCredential,
  type WalletCredentialRow,
} from './held-credential-repository.ts';

export interface DeletionDeps {
  db: Kysely<Database>;
  /** The audit trail: deletions and erasures (docs/operations.md). */
  audit?: Audit;
  store: EncryptedStore;
  /**
   * Tells the issuer of a credential that came by OpenID4VCI (`credential_deleted`); the
   * wallet's issuance side provides it (src/app.ts), so deletion needs no protocol.
   */
  notifyIssuer: (row: WalletCredentialRow) => Promise<void>;
  log: { warn(object: object, message: string): void };
}

/**
 * Deletes a credential for good: the row and its copies (so no list or presentation finds it
 * again), then every block it had, then tells the issuer when it came by OpenID4VCI. The row
 * goes first: a block that cannot be removed (a storage failure) is logged and leaves nothing
 * that points to it, while the opposite order could leave a listed credential without its block.
 */
export async function deleteCredential(deps: DeletionDeps, row: WalletCredentialRow): Promise<void> {
  // The person deletes their own credential (API bearer token or wallet page).
  const cids = await deleteCredentialRow(deps.db, row.credential_pk, async (trx) => {
    await deps.audit?.record(trx, {
      clientId: row.tenant_id,
      actor: `person:${row.user_id}`,
      type: 'credential.delete',
      targets: { credential_id: row.credential_id, user_id: row.user_id },
    });
  });
  if (!cids) throw notFound('The credential');
  await Promise.all(
    cids.map((cid) =>
      deps.store.removeEncrypted(cid).catch((error: Error) => {
        deps.log.warn({ cid, reason: error.message }, 'a deleted credential block was not removed');
      }),
    ),
  );
  if (row.notification_sealed) await deps.notifyIssuer(row);
}

/** DELETE /v1/openidc/credentials/{id}: the access token's user's credential of that id. */
export async function deleteUserCredential(
  deps: DeletionDeps,
  user: UserIdentity,
  credentialId: string,
): Promise<void> {
  const row = await findWalletCredential(deps.db, [user.user_id], { credentialId });
  if (!row) throw notFound('The credential');
  await deleteCredential(deps, row);
}
