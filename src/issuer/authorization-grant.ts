import { createHash, randomBytes } from 'node:crypto';
import { CofferError } from '../errors.ts';
import type { FinishedLogin, InteractionKind, LoginProof } from '../interaction/interaction-kinds.ts';
import { finishInteraction, type InteractionRow } from '../interaction/interaction-repository.ts';
import {
  clientAsker,
  gone,
  type InteractionDeps,
  logInToTenant,
  SESSION_TTL_MS,
} from '../interaction/interaction-service.ts';
import { renderLoginStep } from '../interaction/login-page.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { hashSecret } from '../keys/secrets.ts';
import type { ExtensionTokenResponse, GrantExtension, TokenRequest } from '../oidc/token-service.ts';
import { type IssuerAuthorizationRequest, spendPushedRequest } from './authorization-request.ts';
import { signIssuanceToken } from './issuance-tokens.ts';
import { queueOfferEvent } from './issuer-callbacks.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { issuerIdOf } from './issuer-keys.ts';
import { findOffer, insertOffer, updateOffer } from './issuer-repository.ts';
import { checkWalletAttestation, WALLET_ATTESTATION_ALGORITHMS } from './wallet-attestation-check.ts';

/** Issuer codes carry this prefix, so the token endpoint hands them to this grant. */
export const ISSUER_CODE_PREFIX = 'vci_';
/**
 * An authorization code is exchanged at once: at most 60 s, as FAPI 2.0 Security Profile
 * §5.3.2.1 asks of the authorization servers HAIP wallets are tested against (and as the OP's own
 * codes live).
 */
export const ISSUER_CODE_TTL = 60;
/** The offer a wallet-initiated issuance creates lives as long as its access token may fetch. */
const INTERNAL_OFFER_TTL = 900;

interface CodeGrant {
  configurationIds: string[];
  authorizationDetails: boolean;
}

/**
 * `issuer-login`: the person logs in to the issuer's tenant (signed up there when unknown), and
 * the browser goes back to the wallet with an issuer code. An offer made for one account is
 * only for that account: anyone else is sent back with access_denied.
 */
export function issuerLoginKind(deps: IssuerDeps, interactions: InteractionDeps): InteractionKind {
  return {
    name: 'issuer-login',
    tenantLogin: true,
    asker: (row) => clientAsker(deps, row),
    async logIn(row: InteractionRow, proof: LoginProof): Promise<FinishedLogin> {
      if (row.client_id === null) throw gone();
      const tenant = row.client_id;
      const { user, sessionId } = await logInToTenant(interactions, row, tenant, proof);
      const request = JSON.parse(row.params) as IssuerAuthorizationRequest;
      const back = (params: Record<string, string>) =>
        authorizationResponse(request, deps.config.publicUrl, params);
      const done = (redirectTo: string) => ({
        redirectTo,
        sessionId,
        sessionMaxAgeSeconds: SESSION_TTL_MS / 1000,
      });
      const nowSeconds = Math.floor(deps.now().getTime() / 1000);
      if (request.pushedRequest && !(await spendPushedRequest(deps, request.pushedRequest, nowSeconds))) {
        return done(
          back({
            error: 'invalid_request_uri',
            error_description: 'This request_uri has been used already, in another log-in.',
          }),
        );
      }
      if (request.offerId !== null) {
        const offer = await findOffer(deps.db, request.offerId);
        // Cancelled (its account was erased), spent or expired while the person logged in.
        if (offer?.status !== 'offered' || offer.expires_at <= deps.now().toISOString()) {
          return done(back({ error: 'access_denied', error_description: 'This credential offer is over.' }));
        }
        if (offer.user_id !== null && offer.user_id !== user.user_id) {
          return done(
            back({
              error: 'access_denied',
              error_description: 'This credential offer is for another account.',
            }),
          );
        }
      }
      const code = ISSUER_CODE_PREFIX + randomBytes(32).toString('base64url');
      await deps.db
        .insertInto('issuer_codes')
        .values({
          code_hash: hashSecret(code),
          client_id: request.issuerClientId,
          wallet_client_id: request.walletClientId,
          redirect_uri: request.redirectUri,
          code_challenge: request.codeChallenge,
          dpop_jkt: request.dpopJkt,
          user_id: user.user_id,
          offer_id: request.offerId,
          grant: JSON.stringify({
            configurationIds: request.configurationIds,
            authorizationDetails: request.authorizationDetails,
          } satisfies CodeGrant),
          // The issuer's clock, which the token endpoint's check reads too.
          expires_at: nowSeconds + ISSUER_CODE_TTL,
          consumed_at: null,
        })
        .execute();
      return done(back({ code }));
    },
    // The person may cancel instead of logging in: the wallet hears access_denied (RFC 6749
    // §4.1.2.1). Like a code, it goes to the redirect URI only on the person's own action.
    answer: {
      at: 'consent',
      async decide(row: InteractionRow, body: Record<string, unknown>) {
        if (body['decision'] !== 'decline')
          throw new CofferError(
            'invalid_request',
            'Log in to continue; the only other answer here is decline.',
          );
        if (!(await finishInteraction(deps.db, row.id, {}))) throw gone();
        const request = JSON.parse(row.params) as IssuerAuthorizationRequest;
        return {
          redirect_to: authorizationResponse(request, deps.config.publicUrl, {
            error: 'access_denied',
            error_description: 'The person cancelled the log-in.',
          }),
        };
      },
    },
    render: async (view, reply) => renderLoginStep(view, startPage(reply), { cancellable: true }),
  };
}

/** The redirect back to the wallet (RFC 9207: with iss). */
function authorizationResponse(
  request: Pick<IssuerAuthorizationRequest, 'redirectUri' | 'state'>,
  issuer: string,
  params: Record<string, string>,
): string {
  const url = new URL(request.redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  if (request.state !== null) url.searchParams.set('state', request.state);
  url.searchParams.set('iss', issuer);
  return url.href;
}

const invalidGrant = (why: string) => new CofferError('invalid_grant', why);

function pkceMatches(challenge: string, verifier: string | undefined): boolean {
  if (verifier === undefined || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return createHash('sha256').update(verifier, 'ascii').digest('base64url') === challenge;
}

/**
 * The Authorization Code grant of issuance (§6.1) at Coffer's token endpoint: the issuer code is
 * spent first (so it never serves twice, whatever the outcome), then checked against what the
 * authorization request bound it to: the wallet, the redirect URI, PKCE, the DPoP key.
 */
export function issuerAuthorizationCodeGrant(deps: IssuerDeps): GrantExtension {
  return {
    metadata: {
      grantTypes: [],
      members: {
        authorization_details_types_supported: ['openid_credential'],
        // Attestation-Based Client Authentication (draft 07 §10.1): what attestations may be signed with.
        client_attestation_signing_alg_values_supported: [...WALLET_ATTESTATION_ALGORITHMS],
        client_attestation_pop_signing_alg_values_supported: [...WALLET_ATTESTATION_ALGORITHMS],
      },
      tokenEndpointAuthMethods: ['attest_jwt_client_auth'],
    },
    handles: (request) =>
      request.grant_type === 'authorization_code' &&
      typeof request.code === 'string' &&
      request.code.startsWith(ISSUER_CODE_PREFIX),
    exchange: (request, jkt) => redeemIssuerCode(deps, request, jkt),
  };
}

export async function redeemIssuerCode(
  deps: IssuerDeps,
  request: TokenRequest,
  jkt: string | null,
): Promise<ExtensionTokenResponse> {
  const nowSeconds = Math.floor(deps.now().getTime() / 1000);
  const codeHash = hashSecret(request.code!);
  const code = await deps.db
    .updateTable('issuer_codes')
    .set({ consumed_at: nowSeconds })
    .where('code_hash', '=', codeHash)
    .where('consumed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!code) {
    const used = await deps.db
      .selectFrom('issuer_codes')
      .select('consumed_at')
      .where('code_hash', '=', codeHash)
      .executeTakeFirst();
    throw invalidGrant(used ? 'The code has already been used.' : 'The code is not valid.');
  }
  if (code.expires_at <= nowSeconds) throw invalidGrant('The code has expired.');
  const issuerId = issuerIdOf(deps.config.publicUrl, code.client_id);
  const issuer = await deps.issuerKeys(code.client_id);
  if (!issuer) throw invalidGrant('The code is not valid.');
  if (issuer.haip) {
    if (jkt === null)
      throw new CofferError('invalid_dpop_proof', 'This issuer follows HAIP: send a DPoP proof.');
    const attested = await checkWalletAttestation(deps, request, issuerId);
    if (attested.clientId !== code.wallet_client_id)
      throw invalidGrant('The code was issued to another wallet.');
  } else if (request.client_id !== code.wallet_client_id) {
    throw invalidGrant('The code was issued to another client_id.');
  }
  if (request.redirect_uri !== code.redirect_uri)
    throw invalidGrant('redirect_uri differs from the authorization request.');
  if (!pkceMatches(code.code_challenge, request.code_verifier))
    throw invalidGrant('The PKCE code_verifier does not match the code_challenge.');
  if (code.dpop_jkt !== null && code.dpop_jkt !== jkt)
    throw invalidGrant('The code is bound to another DPoP key (dpop_jkt).');

  const grant = JSON.parse(code.grant) as CodeGrant;
  const offerId = await offerOfCode(deps, code);
  const token = await signIssuanceToken(
    deps.keys,
    { asIssuer: deps.config.publicUrl, issuerId, offerId, jkt },
    nowSeconds,
  );
  return {
    access_token: token.token,
    token_type: jkt ? ('DPoP' as const) : ('Bearer' as const),
    expires_in: token.expiresIn,
    expire_in: token.expiresIn,
    ...(grant.authorizationDetails
      ? {
          authorization_details: grant.configurationIds.map((id) => ({
            type: 'openid_credential',
            credential_configuration_id: id,
            credential_identifiers: [id],
          })),
        }
      : {}),
  };
}

/**
 * The offer the access token fetches: the tenant's offer (issuer_state), now redeemed and tied
 * to the account that logged in; or, when the wallet started, a new offer for that account with
 * the asked configurations, so the credential endpoint serves both alike (from_profile
 * configurations read the account's profile; others wait for the tenant's claims: deferred).
 */
async function offerOfCode(
  deps: IssuerDeps,
  code: { client_id: number; offer_id: string | null; user_id: number | null; grant: string },
): Promise<string> {
  const grant = JSON.parse(code.grant) as CodeGrant;
  const now = deps.now();
  if (code.offer_id !== null) {
    const offer = await findOffer(deps.db, code.offer_id);
    if (offer?.status !== 'offered' || offer.expires_at <= now.toISOString())
      throw invalidGrant('The credential offer has been used or has expired.');
    const spent = await updateOffer(
      deps.db,
      offer.id,
      { status: 'offered', user_id: offer.user_id },
      {
        status: 'redeemed',
        redeemed_at: now.toISOString(),
        user_id: offer.user_id ?? code.user_id,
      },
    );
    if (!spent) throw invalidGrant('The credential offer has been used.');
    await queueOfferEvent(deps, {
      offerId: offer.id,
      clientId: offer.client_id,
      callbackUrl: offer.callback_url,
      event: 'redeemed',
      status: 'redeemed',
    });
    return offer.id;
  }
  const id = randomBytes(16).toString('base64url');
  await insertOffer(deps.db, {
    id,
    client_id: code.client_id,
    configuration_ids: JSON.stringify(grant.configurationIds),
    grant_type: 'authorization_code',
    pre_authorized_code_hash: null,
    issuer_state: null,
    tx_code_hash: null,
    tx_code_spec: null,
    claims_sealed: null,
    user_id: code.user_id,
    status: 'redeemed',
    callback_url: null,
    transaction_id_hash: null,
    deferred_sealed: null,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + INTERNAL_OFFER_TTL * 1000).toISOString(),
    redeemed_at: now.toISOString(),
  });
  return id;
}
