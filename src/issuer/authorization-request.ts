import { randomBytes } from 'node:crypto';
import { findClient } from '../clients/client-repository.ts';
import { CofferError } from '../errors.ts';
import {
  INTERACTION_TTL_MS,
  type InteractionDeps,
  startInteraction,
} from '../interaction/interaction-service.ts';
import { hashSecret } from '../keys/secrets.ts';
import type { AuthorizationExtension } from '../oidc/authorization-extensions.ts';
import { OPENID_SCOPES } from '../oidc/authorize-request.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { issuerIdOf } from './issuer-keys.ts';
import { configurationsWithScope, findConfigurations } from './issuer-repository.ts';
import { checkWalletAttestation } from './wallet-attestation-check.ts';

/**
 * The Authorization Code flow of OpenID4VCI (§5) at Coffer's OP. Wallets are not registered
 * clients: their client_id is any string, and what binds the code to the wallet is PKCE (S256,
 * required), the redirect URI and, when sent, the DPoP key. Since nothing registered vouches for
 * a wallet's redirect URI, errors before the person logs in are shown as a page, never sent to
 * that URI (it would make Coffer an open redirector). HAIP issuers also want PAR, DPoP at the
 * token endpoint and a Wallet Attestation (HAIP §4.4.1).
 */

/** Pushed requests of wallets: this prefix tells them from the OP's own. */
export const ISSUER_REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:vci_';
/** The OP's own pushed requests (src/oidc/pushed-requests.ts), for registered clients. */
const OP_REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** How long a request_uri may be used for the first time (RFC 9126 §2.2: expires_in). */
export const ISSUER_PUSHED_TTL = 60;
/** Once visited, a pushed request waits for the person as long as the log-in may take. */
const PUSHED_VISITED_TTL = INTERACTION_TTL_MS / 1000;

/** What a checked authorization request of a wallet asks, kept on the interaction. */
export interface IssuerAuthorizationRequest {
  issuerClientId: number;
  walletClientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  dpopJkt: string | null;
  configurationIds: string[];
  /** The tenant's offer the wallet follows (issuer_state), or null when the wallet started. */
  offerId: string | null;
  /** Whether the request used authorization_details: the token response then names identifiers. */
  authorizationDetails: boolean;
  /**
   * The pushed request it came from (its request_uri's hash): spent when the person finishes,
   * so a second visit before that (a reload, a browser opened twice) may start again.
   */
  pushedRequest?: string;
}

const PKCE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;
const JKT = /^[A-Za-z0-9_-]{43}$/;
/** Schemes a browser must never be sent to with a code. */
const REFUSED_SCHEMES = ['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:'];

const invalid = (why: string) => new CofferError('invalid_request', why);

const text = (params: Record<string, unknown>, name: string): string | undefined => {
  const value = params[name];
  if (Array.isArray(value)) throw invalid(`The parameter ${name} is given more than once.`);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

function parseDetails(raw: string | undefined): { id: string; locations?: unknown }[] | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalid('authorization_details is not JSON.');
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > 10)
    throw invalid('authorization_details must be a non-empty array.');
  return parsed.map((item: unknown) => {
    const detail = item as Record<string, unknown>;
    if (detail?.['type'] !== 'openid_credential')
      throw invalid('authorization_details entries must be of type openid_credential.');
    const id = detail['credential_configuration_id'];
    if (typeof id !== 'string' || id.length === 0)
      throw invalid('authorization_details entries need a credential_configuration_id.');
    return { id, locations: detail['locations'] };
  });
}

/** The tenant behind an issuer identifier (PUBLIC_URL/issuers/{client_id}). */
function issuerOfIdentifier(publicUrl: string, value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const prefix = `${publicUrl}/issuers/`;
  const rest = value.startsWith(prefix) ? value.slice(prefix.length) : '';
  return /^[1-9]\d{0,9}$/.test(rest) ? Number(rest) : undefined;
}

const findOfferByIssuerState = (deps: IssuerDeps, issuerState: string) =>
  deps.db.selectFrom('issuer_offers').selectAll().where('issuer_state', '=', issuerState).executeTakeFirst();

/**
 * Checks a wallet's authorization request (query or pushed body) and finds what it asks: the
 * issuer (from the offer, authorization_details locations, resource, or the configurations'
 * scope) and the configurations. Throws invalid_request (or invalid_scope) with a sentence.
 */
export async function checkIssuerAuthorizationRequest(
  deps: IssuerDeps,
  params: Record<string, unknown>,
  context: { pushed: boolean; pushedJkt: string | null },
): Promise<IssuerAuthorizationRequest & { haip: boolean }> {
  const walletClientId = text(params, 'client_id');
  if (!walletClientId || walletClientId.length > 256) throw invalid('The request names no client_id.');
  const redirectUri = text(params, 'redirect_uri');
  if (!redirectUri || redirectUri.length > 2048) throw invalid('The request names no redirect_uri.');
  let redirect: URL;
  try {
    redirect = new URL(redirectUri);
  } catch {
    throw invalid('redirect_uri is not an absolute URI.');
  }
  if (redirect.hash || REFUSED_SCHEMES.includes(redirect.protocol))
    throw invalid('redirect_uri may not have a fragment nor that scheme.');
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(redirect.hostname);
  if (redirect.protocol === 'http:' && !loopback)
    throw invalid('redirect_uri must be https, a loopback address or an app scheme (RFC 8252).');
  if (text(params, 'response_type') !== 'code') throw invalid('Only response_type=code is supported.');
  const responseMode = text(params, 'response_mode');
  if (responseMode !== undefined && responseMode !== 'query')
    throw invalid('Only response_mode=query is supported.');
  if (text(params, 'request'))
    throw new CofferError('request_not_supported', 'Request objects are not supported.');
  const state = text(params, 'state') ?? null;
  if (state !== null && state.length > 1024) throw invalid('state is longer than 1024 characters.');
  const codeChallenge = text(params, 'code_challenge');
  if (
    !codeChallenge ||
    text(params, 'code_challenge_method') !== 'S256' ||
    !PKCE_CHALLENGE.test(codeChallenge)
  )
    throw invalid('PKCE is required: a code_challenge with code_challenge_method S256.');
  const askedJkt = text(params, 'dpop_jkt') ?? null;
  if (askedJkt !== null && !JKT.test(askedJkt))
    throw invalid('dpop_jkt must be a base64url SHA-256 JWK thumbprint.');
  if (askedJkt !== null && context.pushedJkt !== null && askedJkt !== context.pushedJkt)
    throw invalid('dpop_jkt differs from the key of the DPoP proof.');
  const dpopJkt = askedJkt ?? context.pushedJkt;

  const details = parseDetails(text(params, 'authorization_details'));
  const scopes = (text(params, 'scope') ?? '').split(' ').filter(Boolean);
  const issuerState = text(params, 'issuer_state');

  // Which issuer is asked, and which of its configurations.
  let issuerClientId: number | undefined;
  let offerId: string | null = null;
  let offered: string[] | undefined;
  if (issuerState !== undefined) {
    const offer = issuerState.length <= 128 ? await findOfferByIssuerState(deps, issuerState) : undefined;
    if (
      offer?.grant_type !== 'authorization_code' ||
      offer.status !== 'offered' ||
      offer.expires_at <= deps.now().toISOString()
    ) {
      throw invalid('The issuer_state names no live credential offer.');
    }
    issuerClientId = offer.client_id;
    offerId = offer.id;
    offered = JSON.parse(offer.configuration_ids) as string[];
  }
  const named = [
    text(params, 'resource'),
    ...(details ?? []).flatMap((d) => (Array.isArray(d.locations) ? d.locations : [])),
  ]
    .filter((v) => v !== undefined)
    .map((v) => issuerOfIdentifier(deps.config.publicUrl, v));
  if (named.some((id) => id === undefined))
    throw invalid(
      'resource and authorization_details locations must name a credential issuer of this server.',
    );
  for (const id of named) {
    if (issuerClientId !== undefined && id !== issuerClientId)
      throw invalid('The request names more than one credential issuer.');
    issuerClientId = id;
  }
  const scoped: string[] = [];
  for (const scope of scopes.filter((s) => !OPENID_SCOPES.includes(s))) {
    const matches = await configurationsWithScope(deps.db, scope);
    const mine =
      issuerClientId === undefined ? matches : matches.filter((m) => m.clientId === issuerClientId);
    if (mine.length === 0) continue; // Unknown scopes are ignored (RFC 6749 §3.3).
    const clients = new Set(mine.map((m) => m.clientId));
    if (clients.size > 1) throw invalid(`The scope ${scope} names configurations of several issuers.`);
    issuerClientId = mine[0]!.clientId;
    scoped.push(...mine.map((m) => m.id));
  }
  if (issuerClientId === undefined)
    throw invalid('The request names no credential issuer (issuer_state, resource, locations or scope).');
  const issuer = await deps.issuerKeys(issuerClientId);
  if (!issuer) throw invalid('The named credential issuer is not known here.');

  const asked = [...new Set([...(details ?? []).map((d) => d.id), ...scoped])];
  const configurationIds = asked.length > 0 ? asked : (offered ?? []);
  if (configurationIds.length === 0)
    throw new CofferError('invalid_scope', 'The request asks for no credential configuration.');
  if (offered && configurationIds.some((id) => !offered.includes(id)))
    throw invalid('The request asks for a configuration the offer does not hold.');
  const known = await findConfigurations(deps.db, issuerClientId, configurationIds);
  const unknown = configurationIds.find((id) => !known.has(id));
  if (unknown !== undefined) throw invalid(`The issuer has no configuration ${unknown}.`);
  // Without an offer nobody gives the claims but the person's profile: nothing else could be issued.
  const offerOnly = offerId === null && configurationIds.find((id) => !known.get(id)!.from_profile);
  if (offerOnly) throw invalid(`The configuration ${offerOnly} is issued only on an offer of the issuer.`);

  const haip = issuer.haip;
  if (haip && !context.pushed) throw invalid('This issuer follows HAIP: push the request (PAR) first.');
  // DPoP is required where the token is issued (the token endpoint); binding the code to the key
  // already here (RFC 9449 §10) stays the wallet's choice, as neither HAIP 1.0 nor FAPI 2.0 ask it.
  return {
    issuerClientId,
    walletClientId,
    redirectUri,
    state,
    codeChallenge,
    dpopJkt,
    configurationIds,
    offerId,
    authorizationDetails: details !== undefined,
    haip,
  };
}

/** The authorization extension the issuer adds to Coffer's OP (src/app.ts registers it). */
export function issuerAuthorization(deps: IssuerDeps, interactions: InteractionDeps): AuthorizationExtension {
  const nowSeconds = () => Math.floor(deps.now().getTime() / 1000);
  /** Whether a client_id names one of Coffer's own clients (an app, a tenant). */
  const isRegisteredClient = async (clientId: unknown) =>
    typeof clientId === 'string' &&
    /^[1-9]\d{0,9}$/.test(clientId) &&
    (await findClient(deps.db, Number(clientId))) !== undefined;
  return {
    async handles(params) {
      const requestUri = params['request_uri'];
      if (typeof requestUri === 'string' && requestUri.startsWith(ISSUER_REQUEST_URI_PREFIX)) return true;
      if (typeof requestUri === 'string' && requestUri.startsWith(OP_REQUEST_URI_PREFIX)) return false;
      // Any other request_uri is no pushed request of this server: what else the request names
      // decides whose it is (and a wallet's is refused there, at PAR or the authorization endpoint).
      // An app's log-in is never an issuance, whatever else it names: it is the OP's request of
      // a registered client, or it asks for openid. Issuance is for wallets (no registered client).
      const scopes = typeof params['scope'] === 'string' ? params['scope'].split(' ').filter(Boolean) : [];
      if (scopes.includes('openid') || (await isRegisteredClient(params['client_id']))) return false;
      if (params['issuer_state'] !== undefined) return true;
      const details = params['authorization_details'];
      if (typeof details === 'string' && details.includes('openid_credential')) return true;
      for (const s of scopes.filter((s) => !OPENID_SCOPES.includes(s))) {
        if ((await configurationsWithScope(deps.db, s)).length > 0) return true;
      }
      return false;
    },

    async push(params, context) {
      if (params['request_uri'] !== undefined)
        throw invalid('request_uri does not belong in a pushed authorization request.');
      const request = await checkIssuerAuthorizationRequest(deps, params, {
        pushed: true,
        pushedJkt: context.dpopJkt,
      });
      if (request.haip) {
        await checkWalletAttestation(
          deps,
          { client_id: request.walletClientId, clientAttestation: context.clientAttestation },
          issuerIdOf(deps.config.publicUrl, request.issuerClientId),
        );
      }
      const requestUri = ISSUER_REQUEST_URI_PREFIX + randomBytes(32).toString('base64url');
      const { haip: _haip, ...kept } = request;
      await deps.db
        .insertInto('pushed_requests')
        .values({
          uri_hash: hashSecret(requestUri),
          client_id: request.issuerClientId,
          params: JSON.stringify(kept),
          dpop_jkt: request.dpopJkt,
          expires_at: nowSeconds() + ISSUER_PUSHED_TTL,
          consumed_at: null,
        })
        .execute();
      return { request_uri: requestUri, expires_in: ISSUER_PUSHED_TTL };
    },

    async authorize(query) {
      let request: IssuerAuthorizationRequest;
      try {
        request = await resolve(query);
      } catch (error) {
        if (error instanceof CofferError) return { errorPage: error.message };
        throw error;
      }
      const interactionId = await startInteraction(interactions, {
        kind: 'issuer-login',
        clientId: request.issuerClientId,
        params: JSON.stringify(request),
      });
      return { redirectTo: `/interaction/${interactionId}` };
    },
  };

  async function resolve(query: Record<string, unknown>): Promise<IssuerAuthorizationRequest> {
    const requestUri = text(query, 'request_uri');
    if (requestUri === undefined) {
      const { haip: _haip, ...request } = await checkIssuerAuthorizationRequest(deps, query, {
        pushed: false,
        pushedJkt: null,
      });
      return request;
    }
    // Unused and unexpired, and this client's: a wrong client_id spends nothing. A visit keeps the
    // request for as long as the log-in may take; the log-in that finishes spends it (FAPI 2.0
    // Security Profile §5.3.2.2, note 3: one-time use at the point of authorization).
    const now = nowSeconds();
    const uriHash = hashSecret(requestUri);
    const row =
      requestUri.length <= 200
        ? await deps.db
            .selectFrom('pushed_requests')
            .select(['params'])
            .where('uri_hash', '=', uriHash)
            .where('consumed_at', 'is', null)
            .where('expires_at', '>', now)
            .executeTakeFirst()
        : undefined;
    const request = row && (JSON.parse(row.params) as IssuerAuthorizationRequest);
    if (!request || request.walletClientId !== text(query, 'client_id'))
      throw invalid('The request_uri is not valid for this client_id, has been used or has expired (60 s).');
    await deps.db
      .updateTable('pushed_requests')
      .set({ expires_at: now + PUSHED_VISITED_TTL })
      .where('uri_hash', '=', uriHash)
      .where('consumed_at', 'is', null)
      .where('expires_at', '<', now + PUSHED_VISITED_TTL)
      .execute();
    return { ...request, pushedRequest: uriHash };
  }
}

/**
 * Spends the pushed request an interaction came from, when the person finishes: false when
 * another visit of the same request_uri finished first.
 */
export async function spendPushedRequest(
  deps: Pick<IssuerDeps, 'db'>,
  uriHash: string,
  nowSeconds: number,
): Promise<boolean> {
  const spent = await deps.db
    .updateTable('pushed_requests')
    .set({ consumed_at: nowSeconds })
    .where('uri_hash', '=', uriHash)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(spent.numUpdatedRows) === 1;
}
