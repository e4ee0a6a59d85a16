import { callbackQueue } from '../db/callback-queue.ts';
import type { VerifierRequestStatus } from '../db/schema.ts';
import { deliverDueCallbacks, queuedCallbackEvent } from '../http/signed-callbacks.ts';
import { runPeriodically } from '../periodic.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import { dropReadClaims } from './verifier-repository.ts';

/**
 * A request's status changed: the tenant's callback_url gets an event (application/jwt, `typ`
 * coffer-event+jwt, Coffer's OP key, verifiable with the published JWKS, signed anew at each
 * attempt), never any claim. Queued in the database so that a restart or another instance
 * delivers it.
 */
export async function queueStatusEvent(
  deps: Pick<VerifierDeps, 'db' | 'keys' | 'config' | 'now'>,
  input: { requestId: string; clientId: number; callbackUrl: string | null; status: VerifierRequestStatus },
): Promise<void> {
  if (!input.callbackUrl) return;
  const now = deps.now();
  const event = queuedCallbackEvent({
    issuer: deps.config.publicUrl,
    clientId: input.clientId,
    event: { event: 'verifier_request_status', request_id: input.requestId, status: input.status },
  });
  await callbackQueue(deps.db, 'verifier_callbacks').add({
    subject: input.requestId,
    url: input.callbackUrl,
    event,
    next_attempt_at: now.toISOString(),
  });
}

/** Delivers callbacks and drops read claims past RESULT_RETENTION, every `everyMs`. */
export function startVerifierWorker(deps: VerifierDeps, everyMs = 1000) {
  const queue = callbackQueue(deps.db, 'verifier_callbacks');
  return runPeriodically(async () => {
    await deliverDueCallbacks(deps, queue, 'a verifier');
    const cutoff = new Date(deps.now().getTime() - deps.config.resultRetention * 1000).toISOString();
    await dropReadClaims(deps.db, cutoff);
  }, everyMs);
}
