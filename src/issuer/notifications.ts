import { CofferError } from '../errors.ts';
import type { IssuanceToken } from './issuance-tokens.ts';
import { type OfferEvent, prepareOfferEvent } from './issuer-callbacks.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import {
  advanceOfferStatus,
  findNotification,
  findOffer,
  recordNotificationEvent,
} from './issuer-repository.ts';

type NotifiedStatus = 'accepted' | 'failed' | 'deleted';

/**
 * The events of §11 and what each may follow: a credential is accepted or fails once, and one
 * that was accepted may later be deleted. Nothing follows a failure or a deletion.
 */
const EVENTS: Record<string, { event: OfferEvent; status: NotifiedStatus; after: string | null }> = {
  credential_accepted: { event: 'credential_accepted', status: 'accepted', after: null },
  credential_failure: { event: 'credential_failure', status: 'failed', after: null },
  credential_deleted: { event: 'credential_deleted', status: 'deleted', after: 'credential_accepted' },
};

const notOfThisToken = () =>
  new CofferError('invalid_notification_id', 'The notification_id is not one of this token.');

/**
 * The Notification Endpoint (§11): the wallet says what became of the credentials of one
 * response. Per notification_id the events move forward once (DESIGN.md, Rules at the edges): an
 * identical repeat succeeds and changes nothing (§11 asks the issuer to be idempotent), any other
 * event after a final one is refused and changes nothing. Each change is recorded on the offer,
 * moves the offer's status forward, and is one callback to the tenant.
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
  const notification = await findNotification(deps.db, body.notification_id);
  if (!notification || notification.offer_id !== token.offerId) throw notOfThisToken();
  if (notification.notification_event === body.event) return;
  const offer = await findOffer(deps.db, token.offerId);
  if (!offer) throw notOfThisToken();
  const event = await prepareOfferEvent(deps, {
    offerId: offer.id,
    clientId: offer.client_id,
    callbackUrl: offer.callback_url,
    event: known.event,
    status: known.status,
  });
  const changed = await deps.writes.durable(async (tx) => {
    // Only from the event it may follow: of two notifications racing, one changes the state.
    if (!(await recordNotificationEvent(tx, body.notification_id, body.event, known.after))) return false;
    await advanceOfferStatus(tx, offer.id, known.status);
    await event(tx);
    return true;
  });
  if (changed) return;
  const now = await findNotification(deps.db, body.notification_id);
  if (now?.notification_event === body.event) return;
  throw new CofferError(
    'invalid_notification_id',
    `This notification_id has had ${now?.notification_event ?? 'another event'}; ${body.event} cannot follow it.`,
  );
}
