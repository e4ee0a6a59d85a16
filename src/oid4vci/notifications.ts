import type { JsonWebKey } from 'node:crypto';
import type { IssuerMetadataResult } from '@openid4vc/openid4vci';
import { notificationContext } from '../credentials/held-credential-contexts.ts';
import type { OutboundClient } from '../http/outbound.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import {
  dpopOptions,
  type IssuanceToken,
  issuanceClient,
  issuanceKeyOf,
  privateJwkOf,
  rememberDpopNonce,
} from './issuer-client.ts';

export type NotificationEvent = 'credential_accepted' | 'credential_failure' | 'credential_deleted';

export interface NotificationDeps {
  outbound: OutboundClient;
  config: { clientId: string };
  log: { warn(object: object, message: string): void };
}

/** §11.1: event_description is printable ASCII without `"` and `\`. */
const describable = (text: string) => text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, ' ').slice(0, 300);

/**
 * Tells the issuer what became of a credential (§11). The issuance does not depend on it: a
 * notification that fails is logged, not retried, as §11 leaves it to the wallet.
 */
export async function sendNotification(
  deps: NotificationDeps,
  metadata: IssuerMetadataResult,
  token: IssuanceToken,
  notificationId: string,
  event: NotificationEvent,
  description?: string,
): Promise<void> {
  if (!metadata.credentialIssuer.notification_endpoint) return;
  const client = issuanceClient(deps.outbound, deps.config.clientId, token.dpop ? [token.dpop.key] : []);
  const dpop = dpopOptions(token);
  try {
    const answer = await client.sendNotification({
      issuerMetadata: metadata,
      accessToken: token.accessToken,
      notification: {
        notificationId,
        event,
        ...(description ? { eventDescription: describable(description) } : {}),
      },
      ...(dpop ? { dpop } : {}),
    });
    rememberDpopNonce(token, answer.dpop?.nonce);
  } catch (error) {
    deps.log.warn(
      {
        issuer: metadata.credentialIssuer.credential_issuer,
        event,
        reason: (error as Error).message?.slice(0, 200),
      },
      'the issuer was not notified',
    );
  }
}

/** What `credential_deleted` needs later (DESIGN.md, The person's wallet); kept sealed with the credential. */
export interface NotificationRecord {
  notification_id: string;
  credential_issuer: string;
  notification_endpoint: string;
  access_token: string;
  dpop_key: JsonWebKey | null;
}

export function notificationRecord(
  params: { metadata: IssuerMetadataResult },
  token: IssuanceToken,
  id: string | null,
): NotificationRecord | null {
  const endpoint = params.metadata.credentialIssuer.notification_endpoint;
  if (!id || !endpoint) return null;
  return {
    notification_id: id,
    credential_issuer: params.metadata.credentialIssuer.credential_issuer,
    notification_endpoint: endpoint,
    access_token: token.accessToken,
    dpop_key: token.dpop ? privateJwkOf(token.dpop.key) : null,
  };
}

/**
 * §11 `credential_deleted`, with the access token of the issuance (and its DPoP key). The token
 * may have expired since; the issuer then refuses, which is logged like any failed notification.
 */
export async function sendDeletedNotification(
  deps: NotificationDeps,
  record: NotificationRecord,
): Promise<void> {
  // Only these two members of the metadata are read for a notification.
  const metadata = {
    credentialIssuer: {
      credential_issuer: record.credential_issuer,
      notification_endpoint: record.notification_endpoint,
    },
  } as unknown as IssuerMetadataResult;
  const token: IssuanceToken = {
    accessToken: record.access_token,
    dpop: record.dpop_key ? { key: issuanceKeyOf(record.dpop_key), nonce: undefined } : null,
  };
  await sendNotification(deps, metadata, token, record.notification_id, 'credential_deleted');
}

/**
 * The deletion side's notifier (credentials/credential-deletion.ts): the sealed record kept with
 * a received credential, sent as `credential_deleted`.
 */
export function notifyDeletion(deps: NotificationDeps & { cipher: FieldCipher }) {
  return async (row: { did: string; credential_id: string; notification_sealed: string | null }) => {
    if (!row.notification_sealed) return;
    const record = JSON.parse(
      deps.cipher.decrypt(row.notification_sealed, notificationContext(row.did, row.credential_id)),
    ) as Partial<NotificationRecord>;
    // Records kept before the endpoint was remembered cannot be sent.
    if (record.notification_endpoint) await sendDeletedNotification(deps, record as NotificationRecord);
  };
}
