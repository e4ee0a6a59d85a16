import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { VerifierRequestStatus } from '../db/schema.ts';
import { runPeriodically } from '../periodic.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import {
  deleteCallback,
  dropReadClaims,
  dueCallbacks,
  queueCallback,
  rescheduleCallback,
} from './verifier-repository.ts';

/** Seconds to wait before each retry; past the last one the event is dropped and logged. */
const BACKOFF_SECONDS = [5, 30, 120, 600, 1800, 3600];

/**
 * A request's status changed: the tenant's callback_url gets a signed event (application/jwt,
 * Coffer's OP key, verifiable with the published JWKS), never any claim. Queued in the database
 * so that a restart or another instance delivers it.
 */
export async function queueStatusEvent(
  deps: Pick<VerifierDeps, 'db' | 'keys' | 'config' | 'now'>,
  input: { requestId: string; clientId: number; callbackUrl: string | null; status: VerifierRequestStatus },
): Promise<void> {
  if (!input.callbackUrl) return;
  const key = await deps.keys.current();
  const now = deps.now();
  const event = await new SignJWT({
    event: 'verifier_request_status',
    request_id: input.requestId,
    status: input.status,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(deps.config.publicUrl)
    .setAudience(String(input.clientId))
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setJti(randomUUID())
    .sign(key.privateKey);
  await queueCallback(deps.db, {
    request_id: input.requestId,
    url: input.callbackUrl,
    event,
    next_attempt_at: now.toISOString(),
  });
}

/** Sends the events that are due; each failure waits longer before the next try. */
export async function deliverDueCallbacks(deps: VerifierDeps): Promise<number> {
  const now = deps.now();
  const due = await dueCallbacks(deps.db, now.toISOString(), 20);
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
      await deleteCallback(deps.db, callback.callback_pk);
      if (!delivered) {
        deps.log.warn(
          { request: callback.request_id, reason },
          'a verifier callback was given up after its retries',
        );
      }
    } else {
      const next = new Date(now.getTime() + wait * 1000).toISOString();
      await rescheduleCallback(deps.db, callback.callback_pk, callback.attempts + 1, next);
    }
  }
  return due.length;
}

/** Delivers callbacks and drops read claims past RESULT_RETENTION, every `everyMs`. */
export function startVerifierWorker(deps: VerifierDeps, everyMs = 1000) {
  return runPeriodically(async () => {
    await deliverDueCallbacks(deps);
    const cutoff = new Date(deps.now().getTime() - deps.config.resultRetention * 1000).toISOString();
    await dropReadClaims(deps.db, cutoff);
  }, everyMs);
}
