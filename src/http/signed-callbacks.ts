import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { KeyRing } from '../keys/signing-keys.ts';
import type { OutboundClient } from './outbound.ts';

/** Seconds to wait before each retry; past the last one the event is dropped and logged. */
const BACKOFF_SECONDS = [5, 30, 120, 600, 1800, 3600];

/**
 * A tenant's callback event: a JWT (application/jwt) signed with Coffer's OP key, so the tenant
 * verifies it with the published JWKS; `aud` is the client id. It never carries claims.
 */
export async function signCallbackEvent(
  keys: KeyRing,
  input: { issuer: string; clientId: number; event: Record<string, unknown>; now: Date },
): Promise<string> {
  const key = await keys.current();
  return new SignJWT(input.event)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(input.issuer)
    .setAudience(String(input.clientId))
    .setIssuedAt(Math.floor(input.now.getTime() / 1000))
    .setJti(randomUUID())
    .sign(key.privateKey);
}

export interface QueuedCallback {
  callback_pk: number;
  url: string;
  event: string;
  attempts: number;
  /** What the log names when an event is given up (a request or offer id). */
  subject: string;
}

/** Where each protocol keeps its queue; the delivery below is the same for all. */
export interface CallbackQueue {
  due(nowIso: string, limit: number): Promise<QueuedCallback[]>;
  remove(pk: number): Promise<void>;
  reschedule(pk: number, attempts: number, nextIso: string): Promise<void>;
}

/** Sends the events that are due; each failure waits longer before the next try. */
export async function deliverDueCallbacks(
  deps: { outbound: OutboundClient; now: () => Date; log: { warn(object: object, message: string): void } },
  queue: CallbackQueue,
  what: string,
): Promise<number> {
  const now = deps.now();
  const due = await queue.due(now.toISOString(), 20);
  for (const callback of due) {
    let delivered = false;
    let reason = '';
    try {
      const response = await deps.outbound({
        method: 'POST',
        url: callback.url,
        headers: { 'content-type': 'application/jwt' },
        body: callback.event,
        maxBytes: 16 * 1024,
      });
      delivered = response.status >= 200 && response.status < 300;
      reason = `HTTP ${response.status}`;
    } catch (error) {
      reason = (error as Error).message;
    }
    const wait = BACKOFF_SECONDS[callback.attempts];
    if (delivered || wait === undefined) {
      await queue.remove(callback.callback_pk);
      if (!delivered)
        deps.log.warn(
          { subject: callback.subject, reason },
          `${what} callback was given up after its retries`,
        );
    } else {
      const next = new Date(now.getTime() + wait * 1000).toISOString();
      await queue.reschedule(callback.callback_pk, callback.attempts + 1, next);
    }
  }
  return due.length;
}
