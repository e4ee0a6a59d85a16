import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { secretMatchesHash } from '../keys/secrets.ts';

/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3.1): HTTP Basic or
 * client_id and client_secret in the body, never both.
 */

/** HTTP Basic client authentication: both parts are form-urlencoded. */
export function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = header?.match(/^Basic +([A-Za-z0-9+/]+=*) *$/i);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new CofferError('invalid_client', 'Malformed HTTP Basic credentials.');
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw new CofferError('invalid_client', 'Malformed HTTP Basic credentials.');
  }
}

export interface ClientCredentials {
  clientId: string;
  secret: string | undefined;
  /** Basic was used: an invalid_client answer carries WWW-Authenticate. */
  basic: boolean;
}

/** Who the request says it is; 400 for two methods at once, 401 for none. */
export function clientCredentialsOf(
  authorization: string | undefined,
  body: { client_id?: string | undefined; client_secret?: string | undefined },
): ClientCredentials {
  const basic = basicCredentials(authorization);
  if (basic && body.client_secret !== undefined) {
    throw new CofferError(
      'invalid_request',
      'Use one client authentication method, not both Basic and client_secret.',
    );
  }
  if (basic && body.client_id !== undefined && body.client_id !== basic.id) {
    throw new CofferError('invalid_request', 'client_id in the body differs from the Basic credentials.');
  }
  const clientId = basic?.id ?? body.client_id;
  if (clientId === undefined) throw new CofferError('invalid_client', 'Client authentication is required.');
  return { clientId, secret: basic?.secret ?? body.client_secret, basic: basic !== undefined };
}

/**
 * The client whose secret was given, or a public client (registered without a secret, RFC 6749
 * §2.1) that names itself and sends none. One answer for every failure, so nothing is learnt.
 */
export async function authenticateClient(
  db: Kysely<Database>,
  credentials: { clientId: string; secret: string | undefined },
) {
  const client = /^[1-9]\d{0,9}$/.test(credentials.clientId)
    ? await findClient(db, Number(credentials.clientId))
    : undefined;
  const authenticated =
    client !== undefined &&
    (client.client_secret_hash === null
      ? credentials.secret === undefined
      : credentials.secret !== undefined && secretMatchesHash(credentials.secret, client.client_secret_hash));
  if (!authenticated) throw new CofferError('invalid_client', 'Client authentication failed.');
  return client;
}

/** The OAuth grants a client is registered for (coffer client create/set --grant). */
export function grantTypesOf(client: { grant_types: string }): string[] {
  return JSON.parse(client.grant_types) as string[];
}

/** Failed attempts per address at the client-authenticated endpoints before they answer 429 for a while. */
const FAILURES_ALLOWED = 300;
const FAILURE_WINDOW_SECONDS = 60;

/**
 * Counts a failed client authentication or grant. Per address, not per client (that would let
 * anyone lock a client out); past the limit the answer is 429 rather than a hint.
 */
export function countFailure(limiter: RateLimiter, ip: string): Promise<void> {
  return limiter.hit(`token-fail:ip:${ip}`, FAILURES_ALLOWED, FAILURE_WINDOW_SECONDS);
}
