import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import {
  type NotificationDeps,
  type NotificationRecord,
  sendDeletedNotification,
} from '../oid4vci/notifications.ts';
import type { EncryptedStore } from '../storage/index.ts';
import { deleteCredentialRow, type WalletCredentialRow } from './wallet-repository.ts';

export interface DeletionDeps {
  db: Kysely<Database>;
  store: EncryptedStore;
  cipher: FieldCipher;
  notifications: NotificationDeps;
}

export const notificationContext = (did: string, credentialId: string) =>
  `credentials/${did}/${credentialId}/notification`;

/**
 * Deletes a credential for good: the row and its copies (so no list or presentation finds it
 * again), then every block it had, then tells the issuer when it came by OpenID4VCI. The row
 * goes first: a block that cannot be removed (a storage failure) is logged and leaves nothing
 * that points to it, while the opposite order could leave a listed credential without its block.
 */
export async function deleteCredential(deps: DeletionDeps, row: WalletCredentialRow): Promise<void> {
  const cids = await deleteCredentialRow(deps.db, row.credential_pk);
  if (!cids) throw notFound('The credential');
  await Promise.all(
    cids.map((cid) =>
      deps.store.removeEncrypted(cid).catch((error: Error) => {
        deps.notifications.log.warn(
          { cid, reason: error.message },
          'a deleted credential block was not removed',
        );
      }),
    ),
  );
  if (row.notification_sealed) {
    const record = JSON.parse(
      deps.cipher.decrypt(row.notification_sealed, notificationContext(row.did, row.credential_id)),
    ) as Partial<NotificationRecord>;
    // Records kept before the endpoint was remembered cannot be sent.
    if (record.notification_endpoint)
      await sendDeletedNotification(deps.notifications, record as NotificationRecord);
  }
}
