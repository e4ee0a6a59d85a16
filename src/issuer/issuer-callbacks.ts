import { callbackQueue } from '../db/callback-queue.ts';
import type { IssuerOfferStatus } from '../db/schema.ts';
import { deliverDueCallbacks, queuedCallbackEvent } from '../http/signed-callbacks.ts';
import { runPeriodically } from '../periodic.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { recordOfferEvent, sweepExpired } from './issuer-repository.ts';
import type { Work } from './issuer-writes.ts';

export type OfferEvent =
  | 'offered'
  | 'redeemed'
  | 'deferred'
  | 'issued'
  | 'credential_accepted'
  | 'credential_failure'
  | 'credential_deleted'
  | 'tx_code_failed'
  | 'tx_code_locked'
  | 'cancelled';

export interface OfferEventInput {
  offerId: string;
  clientId: number;
  callbackUrl: string | null;
  event: OfferEvent;
  status: IssuerOfferStatus;
}

/**
 * Something happened to an offer: it is recorded with the offer (GET /v1/issuer/offers/{id}) and,
 * when the tenant gave a callback_url, an event (no claims) is queued for it, which each delivery
 * attempt signs anew (http/signed-callbacks.ts). The returned work writes both rows in the
 * caller's transaction.
 */
export async function prepareOfferEvent(
  deps: Pick<IssuerDeps, 'keys' | 'config' | 'now'>,
  input: OfferEventInput,
): Promise<Work<void>> {
  const now = deps.now();
  const queued = input.callbackUrl
    ? queuedCallbackEvent({
        issuer: deps.config.publicUrl,
        clientId: input.clientId,
        event: { event: input.event, offer_id: input.offerId, status: input.status },
      })
    : null;
  return async (tx) => {
    await recordOfferEvent(tx, {
      offer_id: input.offerId,
      event: input.event,
      status: input.status,
      at: now.toISOString(),
    });
    if (queued && input.callbackUrl) {
      await callbackQueue(tx, 'issuer_callbacks').add({
        subject: input.offerId,
        url: input.callbackUrl,
        event: queued,
        next_attempt_at: now.toISOString(),
      });
    }
  };
}

/** An event on its own (paths that write nothing else). */
export async function queueOfferEvent(
  deps: Pick<IssuerDeps, 'db' | 'keys' | 'config' | 'now'>,
  input: OfferEventInput,
): Promise<void> {
  await (await prepareOfferEvent(deps, input))(deps.db);
}

/** How often the worker also drops what expired (every `SWEEP_EVERY` rounds). */
const SWEEP_EVERY = 60;

/** Delivers callbacks every `everyMs`; about once a minute drops expired claims and codes. */
export function startIssuerWorker(deps: IssuerDeps, everyMs = 1000) {
  const queue = callbackQueue(deps.db, 'issuer_callbacks');
  let round = 0;
  return runPeriodically(async () => {
    await deliverDueCallbacks(deps, queue, 'an issuer');
    if (round++ % SWEEP_EVERY === 0) await sweepExpired(deps.db, deps.now());
  }, everyMs);
}
