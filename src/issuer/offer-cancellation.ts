import type { AuditContext } from '../audit/audit-events.ts';
import { prepareOfferEvent } from './issuer-callbacks.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { cancelUnfinishedOffersOf, findUnfinishedOffersOf } from './issuer-repository.ts';
import type { Work } from './issuer-writes.ts';

/**
 * Erasing an account ends what was prepared for the person (DESIGN.md, Rules at the edges): an
 * offer made for the account that has not issued is cancelled, so whoever holds its link cannot
 * log in as someone else and take a credential carrying the erased person's claims. The tenant's
 * callback hears `cancelled`. The events are signed here, before the erasure's transaction; the
 * returned work cancels in it (offers made meanwhile are cancelled too, without a callback).
 */
export async function prepareOfferCancellation(
  deps: Pick<IssuerDeps, 'db' | 'keys' | 'config' | 'now' | 'audit'>,
  userId: number,
  by: AuditContext,
): Promise<Work<void>> {
  const offers = await findUnfinishedOffersOf(deps.db, userId);
  const events = new Map(
    await Promise.all(
      offers.map(
        async (offer) =>
          [
            offer.id,
            await prepareOfferEvent(deps, {
              offerId: offer.id,
              clientId: offer.client_id,
              callbackUrl: offer.callback_url,
              event: 'cancelled',
              status: 'cancelled',
            }),
          ] as const,
      ),
    ),
  );
  return async (tx) => {
    for (const { id, client_id: clientId } of await cancelUnfinishedOffersOf(tx, userId)) {
      await events.get(id)?.(tx);
      await deps.audit?.record(tx, {
        ...by,
        clientId,
        type: 'issuer.offer_cancel',
        targets: { offer_id: id },
      });
    }
  };
}
