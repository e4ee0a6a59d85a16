import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import { CofferError, type ErrorCode } from '../errors.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { hashSecret } from '../keys/secrets.ts';
import { checkAuthorizationRequest } from './authorize-request.ts';
import { authenticateClient, type ClientCredentials, countFailure } from './client-authentication.ts';
import { type DpopDeps, verifyDpopProof } from './dpop.ts';

/** Pushed authorization requests (RFC 9126): single use, 60 s. */
export const PUSHED_REQUEST_TTL = 60;
const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** Parameters that authenticate the client; never kept with the request. */
const CLIENT_AUTH_PARAMS = ['client_secret', 'client_assertion', 'client_assertion_type'];
const CHECK_ERRORS: ErrorCode[] = ['invalid_scope', 'unsupported_response_type', 'request_not_supported'];

export interface PushDeps {
  db: Kysely<Database>;
  limiter: RateLimiter;
  dpop: DpopDeps;
  issuer: string;
  now?: () => number;
}

/**
 * RFC 9126 §2: the client authenticates as at the token endpoint, the parameters get the checks
 * of the authorization endpoint, and the answer is a one-time request_uri. A DPoP proof here
 * binds the code to its key (RFC 9449 §10.1).
 */
export async function pushAuthorizationRequest(
  deps: PushDeps,
  credentials: ClientCredentials,
  params: Record<string, string>,
  dpopProof: string | undefined,
  ip: string,
): Promise<{ request_uri: string; expires_in: number }> {
  let client: Awaited<ReturnType<typeof authenticateClient>>;
  try {
    client = await authenticateClient(deps.db, credentials);
  } catch (error) {
    if (error instanceof CofferError && error.code === 'invalid_client') await countFailure(deps.limiter, ip);
    throw error;
  }
  const jkt = dpopProof
    ? (await verifyDpopProof(deps.dpop, dpopProof, { method: 'POST', url: `${deps.issuer}/v2/openidc/par` }))
        .jkt
    : null;
  const kept = Object.fromEntries(
    Object.entries(params).filter(([name]) => !CLIENT_AUTH_PARAMS.includes(name)),
  );
  kept['client_id'] = String(client.client_id);
  const check = await checkAuthorizationRequest(kept, (id) => findClient(deps.db, id), {
    pushed: true,
    pushedJkt: jkt,
  });
  if (check.kind === 'error_page') throw new CofferError('invalid_request', check.message);
  if (check.kind === 'redirect_error') {
    const code = CHECK_ERRORS.find((c) => c === check.error) ?? 'invalid_request';
    throw new CofferError(code, check.description);
  }
  const requestUri = REQUEST_URI_PREFIX + randomBytes(32).toString('base64url');
  const nowSeconds = Math.floor((deps.now ? deps.now() : Date.now()) / 1000);
  await deps.db
    .insertInto('pushed_requests')
    .values({
      uri_hash: hashSecret(requestUri),
      client_id: client.client_id,
      params: JSON.stringify(kept),
      dpop_jkt: jkt,
      expires_at: nowSeconds + PUSHED_REQUEST_TTL,
      consumed_at: null,
    })
    .execute();
  return { request_uri: requestUri, expires_in: PUSHED_REQUEST_TTL };
}

/**
 * The pushed parameters behind a request_uri, if it is this client's, unused and unexpired; it is
 * spent by this call (one conditional update, so two instances cannot both take it).
 */
export async function takePushedRequest(
  db: Kysely<Database>,
  requestUri: string,
  clientId: number,
  nowSeconds: number,
): Promise<{ params: Record<string, string>; dpopJkt: string | null } | undefined> {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX) || requestUri.length > 200) return undefined;
  const row = await db
    .updateTable('pushed_requests')
    .set({ consumed_at: nowSeconds })
    .where('uri_hash', '=', hashSecret(requestUri))
    .where('client_id', '=', clientId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', nowSeconds)
    .returning(['params', 'dpop_jkt'])
    .executeTakeFirst();
  return row && { params: JSON.parse(row.params) as Record<string, string>, dpopJkt: row.dpop_jkt };
}
