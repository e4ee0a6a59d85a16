import { createHash } from 'node:crypto';
import type { StatusReference } from '../formats/credential-format.ts';
import type { SecuredDocument } from '../formats/ldp-vc/bbs-2023/shared.ts';
import { type OutboundClient, OutboundError, type OutboundResponse } from '../http/outbound.ts';
import {
  BITSTRING_LIST_ACCEPT,
  type BitstringStatusList,
  bitstringStatusAt,
  openListDocument,
  openListJwt,
  readListCredential,
} from './bitstring-status-list.ts';
import { createStatusCache, type Loaded } from './status-cache.ts';
import { StatusListError, type StatusOutcome, verificationKey } from './status-list-shared.ts';
import {
  TOKEN_LIST_ACCEPT,
  TOKEN_LIST_CWT_MEDIA_TYPE,
  type TokenStatusList,
  tokenStatusAt,
  verifyTokenStatusList,
  verifyTokenStatusListCwt,
} from './token-status-list.ts';

/**
 * Whether a stored credential still holds, by its issuer's status list (DESIGN.md, The person's
 * wallet: Status). A list that cannot be fetched or verified gives `unknown` with the reason: it
 * is shown on the page and does not block a presentation, whose verifier checks status itself.
 */

export type { CredentialStatusState, StatusOutcome } from './status-list-shared.ts';

export interface StatusCheckerDeps {
  /** Fetches under the outbound rules (https, no private targets unless allowed). */
  outbound: OutboundClient;
  now: () => Date;
  /** bbs-2023 base-proof verification (Bbs2023Operations), for the lists of ldp_vc issuers. */
  verifyBaseProof: (
    document: SecuredDocument,
    issuerPublicKey: Uint8Array,
  ) => Promise<{ ok: boolean; reason?: string }>;
}

export interface StatusChecker {
  check(reference: StatusReference): Promise<StatusOutcome>;
}

const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
const DEFAULT_LIFETIME_MS = 60_000;
/** Long enough that a page of credentials on one dead list makes one attempt, short enough to retry soon. */
const FAILURE_LIFETIME_MS = 10_000;
/** Whatever an issuer allows, a revocation shows within the hour. */
const MAX_LIFETIME_MS = 3600_000;
const MAX_LISTS = 500;
const MAX_CACHED_BYTES = 64 * 1024 * 1024;

type ListResult = { ok: true; list: TokenStatusList | BitstringStatusList } | { ok: false; reason: string };

const failure = (reason: string): Loaded<ListResult> => ({
  value: { ok: false, reason },
  lifetimeMs: FAILURE_LIFETIME_MS,
  size: reason.length,
});

/** `max-age` in ms, 0 for `no-store` / `no-cache`, null when the response says neither. */
export function cacheControlLifetime(header: string | undefined): number | null {
  let maxAge: number | null = null;
  for (const directive of (header ?? '').toLowerCase().split(',')) {
    const [name, value] = directive.trim().split('=');
    if (name === 'no-store' || name === 'no-cache') return 0;
    if (name === 'max-age' && value !== undefined && /^"?\d+"?$/.test(value)) {
      maxAge = Number(value.replaceAll('"', '')) * 1000;
    }
  }
  return maxAge;
}

/** The earliest of the list's `ttl`, the response's `max-age` and the list's expiry. */
export function listLifetime(
  list: TokenStatusList | BitstringStatusList,
  cacheControl: string | undefined,
  now: Date,
): number {
  const limits = [
    list.list === 'token' ? list.ttlMs : null,
    cacheControlLifetime(cacheControl),
    list.expiresAt === null ? null : list.expiresAt - now.getTime(),
  ].filter((limit) => limit !== null);
  return Math.min(limits.length > 0 ? Math.min(...limits) : DEFAULT_LIFETIME_MS, MAX_LIFETIME_MS);
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('base64url');

/** Lists are kept per address and per key: a list is only as good as the key it verified with. */
function cacheKeyOf(reference: StatusReference): string {
  const { issuerKey } = reference;
  const key =
    issuerKey.kind === 'jose'
      ? sha256(verificationKey(issuerKey).export({ format: 'der', type: 'spki' }))
      : sha256(`${issuerKey.issuer} ${Buffer.from(issuerKey.publicKey).toString('base64url')}`);
  return `${reference.list} ${key} ${reference.uri}`;
}

async function verifyList(
  reference: StatusReference,
  response: OutboundResponse,
  deps: StatusCheckerDeps,
): Promise<TokenStatusList | BitstringStatusList> {
  const { issuerKey, uri } = reference;
  const { body } = response;
  const now = deps.now();
  if (reference.list === 'token') {
    if (issuerKey.kind !== 'jose') throw new StatusListError('a token status list is signed with a JOSE key');
    // The draft has the server name the form it answers with; a JWT needs no such label to be read.
    return response.contentType === TOKEN_LIST_CWT_MEDIA_TYPE
      ? verifyTokenStatusListCwt(response.bytes, uri, verificationKey(issuerKey), now)
      : verifyTokenStatusList(body, uri, verificationKey(issuerKey), now);
  }
  if (issuerKey.kind === 'jose') {
    const { credential, exp } = await openListJwt(body, verificationKey(issuerKey));
    return readListCredential(credential, uri, exp, now);
  }
  const credential = await openListDocument(
    body,
    issuerKey.issuer,
    issuerKey.publicKey,
    deps.verifyBaseProof,
  );
  return readListCredential(credential, uri, null, now);
}

async function loadList(reference: StatusReference, deps: StatusCheckerDeps): Promise<Loaded<ListResult>> {
  let response: OutboundResponse;
  try {
    response = await deps.outbound({
      method: 'GET',
      url: reference.uri,
      headers: { accept: reference.list === 'token' ? TOKEN_LIST_ACCEPT : BITSTRING_LIST_ACCEPT },
      maxBytes: MAX_RESPONSE_BYTES,
    });
  } catch (error) {
    return failure(
      error instanceof OutboundError
        ? `the status list could not be fetched: ${error.message}`
        : 'the status list could not be fetched',
    );
  }
  if (response.status !== 200) {
    return failure(`the status list at ${new URL(reference.uri).host} answered HTTP ${response.status}`);
  }
  try {
    const list = await verifyList(reference, response, deps);
    return {
      value: { ok: true, list },
      lifetimeMs: listLifetime(list, response.headers['cache-control'], deps.now()),
      size: list.bytes.length + reference.uri.length,
    };
  } catch (error) {
    return failure(error instanceof StatusListError ? error.message : 'the status list cannot be read');
  }
}

export function createStatusChecker(deps: StatusCheckerDeps): StatusChecker {
  const cache = createStatusCache<ListResult>({
    now: () => deps.now().getTime(),
    maxEntries: MAX_LISTS,
    maxBytes: MAX_CACHED_BYTES,
  });
  return {
    async check(reference) {
      try {
        const result = await cache.get(cacheKeyOf(reference), () => loadList(reference, deps));
        if (!result.ok) return { state: 'unknown', reason: result.reason };
        const { list } = result;
        if (list.list === 'token') return tokenStatusAt(list, reference.index);
        if (reference.list !== 'bitstring')
          return { state: 'unknown', reason: 'the status list is of another kind' };
        return bitstringStatusAt(list, reference.index, reference.purpose);
      } catch {
        return { state: 'unknown', reason: 'the status list could not be checked' };
      }
    },
  };
}
