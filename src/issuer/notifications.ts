import { CofferError } from '../errors.ts';
import type { IssuanceToken } from './issuance-tokens.ts';
import { type OfferEvent, queueOfferEvent } from './issuer-callbacks.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { findOffer } from './issuer-repository.ts';

const EVENTS: Record<string, { event: OfferEvent; status: 'accepted' | 'failed' | 'deleted' }> = {
  credential_accepted: { event: 'credential_accepted', status: 'accepted' },
  credential_failure: { event: 'credential_failure', status: 'failed' },
  credential_deleted: { event: 'credential_deleted', status: 'deleted' },
};

/**
 * The Notification Endpoint (§11): the wallet says what became of the credentials of one
 * response; the offer's status follows, and the tenant's callback hears of it.
 */
export async function receiveNotification(
  deps: IssuerDeps,
  token: IssuanceToken,
  body: { notification_id: string; event: string },
): Promise<void> {
  // Own members only: "constructor" or "__proto__" must not find Object.prototype's.
  const known = Object.hasOwn(EVENTS, body.event) ? EVENTS[body.event] : undefined;
  if (!known) {
    throw new CofferError(
      'invalid_notification_request',
      'event must be credential_accepted, credential_failure or credential_deleted.',
    );
  }
  const issued = await deps.db
    .selectFrom('issued_credentials')
    .select('offer_id')
    .where('notification_id', '=', body.notification_id)
    .executeTakeFirst();
  if (!issued || issued.offer_id !== token.offerId) {
    throw new CofferError('invalid_notification_id', 'The notification_id is not one of this token.');
  }
  const offer = await findOffer(deps.db, token.offerId);
  if (!offer)
    throw new CofferError('invalid_notification_id', 'The notification_id is not one of this token.');
  await deps.db
    .updateTable('issuer_offers')
    .set({ status: known.status })
    .where('id', '=', offer.id)
    .execute();
  await queueOfferEvent(deps, {
    offerId: offer.id,
    clientId: offer.client_id,
    callbackUrl: offer.callback_url,
    event: known.event,
    status: known.status,
  });
}
