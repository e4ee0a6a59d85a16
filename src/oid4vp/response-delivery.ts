import { type OutboundClient, OutboundError, type OutboundResponse } from '../http/outbound.ts';
import type { ErrorReturn } from './authorization-request.ts';
import type { ClientMetadata } from './oid4vp-schemas.ts';
import { chooseEncryption, type EncryptionChoice, encryptResponse } from './response-encryption.ts';

/** The authorization response parameters (§8.1, or an error per §8.5). */
export type ResponseParameters =
  | { vp_token: Record<string, unknown[]> }
  | { error: string; error_description?: string };

export interface Delivery {
  /** Where the browser goes next; null when the verifier asked for nothing (direct_post). */
  redirectTo: string | null;
}

/** The verifier could not be given the answer; the person is told, nothing is retried. */
export class DeliveryError extends Error {
  override readonly name = 'DeliveryError';
}

function withState(parameters: ResponseParameters, state: string | null): Record<string, unknown> {
  return state === null ? { ...parameters } : { ...parameters, state };
}

/** Form encoding: objects (vp_token) as JSON text (§5.1, §8.2). */
function formOf(parameters: Record<string, unknown>): URLSearchParams {
  return new URLSearchParams(
    Object.entries(parameters).map(([name, value]): [string, string] => [
      name,
      typeof value === 'string' ? value : JSON.stringify(value),
    ]),
  );
}

async function postToVerifier(
  target: string,
  form: URLSearchParams,
  outbound: OutboundClient,
): Promise<Delivery> {
  let answer: OutboundResponse;
  try {
    answer = await outbound({
      method: 'POST',
      url: target,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    });
  } catch (error) {
    if (error instanceof OutboundError)
      throw new DeliveryError(`the verifier could not be reached: ${error.message}`);
    throw error;
  }
  if (answer.status !== 200)
    throw new DeliveryError(`the verifier refused the answer (HTTP ${answer.status})`);
  let body: unknown;
  try {
    body = answer.body ? JSON.parse(answer.body) : {};
  } catch {
    return { redirectTo: null };
  }
  const next = (body as { redirect_uri?: unknown } | null)?.redirect_uri;
  if (typeof next !== 'string') return { redirectTo: null };
  try {
    const url = new URL(next);
    return { redirectTo: ['https:', 'http:'].includes(url.protocol) ? url.href : null };
  } catch {
    return { redirectTo: null };
  }
}

/**
 * Answers the verifier by its response mode (§8.2, §8.3): in the redirect's fragment, or by a
 * POST to its response URI, encrypted to its key for direct_post.jwt (errors too, where a key
 * fits; §8.3.1 allows them in clear otherwise).
 */
export async function deliverResponse(
  to: ErrorReturn & { metadata: ClientMetadata | null },
  parameters: ResponseParameters,
  outbound: OutboundClient,
  /** The key and algorithms already chosen for this answer (a presentation is bound to them). */
  chosen?: EncryptionChoice,
): Promise<Delivery> {
  const payload = withState(parameters, to.state);
  if (to.responseMode === 'fragment') {
    const url = new URL(to.target);
    url.hash = formOf(payload).toString();
    return { redirectTo: url.href };
  }
  const encryption =
    to.responseMode === 'direct_post.jwt' && to.metadata
      ? (chosen ?? (await chooseEncryption(to.metadata)))
      : undefined;
  const form = encryption
    ? new URLSearchParams({ response: await encryptResponse(payload, encryption) })
    : formOf(payload);
  return postToVerifier(to.target, form, outbound);
}
