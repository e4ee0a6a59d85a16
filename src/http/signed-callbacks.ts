import { randomUUID } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import type { KeyRing } from '../keys/signing-keys.ts';
import type { OutboundClient } from './outbound.ts';

/** Seconds to wait before each retry; past the last one the event is dropped and logged. */
const BACKOFF_SECONDS = [5, 30, 120, 600, 1800, 3600];

/** The JOSE `typ` of callback events: no other JWT of Coffer's OP key passes for one (RFC 8725 §3.11). */
export const CALLBACK_EVENT_TYPE = 'coffer-event+jwt';
/** Seconds an event's signature is good for; each delivery attempt signs it anew. */
export const CALLBACK_EVENT_LIFETIME = 300;

/**
 * A tenant's callback event as it is queued: its claims (never a credential claim), `iss`, `aud`
 * the client id and a `jti` that every delivery attempt keeps. It is signed at each attempt
 * (signCallbackEvent), so a retry hours later still arrives fresh and short-lived.
 */
export function queuedCallbackEvent(input: {
  issuer: string;
  clientId: number;
  event: Record<string, unknown>;
}): string {
  return JSON.stringify({
    ...input.event,
    iss: input.issuer,
    aud: String(input.clientId),
    jti: randomUUID(),
  });
}

/**
 * The event as sent: a JWT (application/jwt, `typ` coffer-event+jwt) signed with Coffer's OP key,
 * verifiable with the published JWKS, `iat` now and `exp` five minutes later. Events queued by an
 * earlier version were stored signed: their claims are taken from that JWT and signed anew.
 */
export async function signCallbackEvent(keys: KeyRing, queued: string, now: Date): Promise<string> {
  const claims = queued.startsWith('{')
    ? (JSON.parse(queued) as Record<string, unknown>)
    : (decodeJwt(queued) as Record<string, unknown>);
  const { iat: _iat, exp: _exp, ...kept } = claims;
  const key = await keys.current();
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ ...kept, iat, exp: iat + CALLBACK_EVENT_LIFETIME })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: CALLBACK_EVENT_TYPE })
    .sign(key.privateKey);
}

export interface QueuedCallback {
  callback_pk: number;
  url: string;
  attempts: number;
  /** The event's claims (queuedCallbackEvent), signed at each attempt. */
  event: string;
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
  deps: {
    keys: KeyRing;
    outbound: OutboundClient;
    now: () => Date;
    log: { warn(object: object, message: string): void };
  },
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
        body: await signCallbackEvent(deps.keys, callback.event, deps.now()),
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
