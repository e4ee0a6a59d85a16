import { CofferError } from '../errors.ts';
import type { ExtensionTokenResponse, GrantExtension, TokenRequest } from '../oidc/token-service.ts';
import { signIssuanceToken } from './issuance-tokens.ts';
import { prepareOfferEvent, queueOfferEvent } from './issuer-callbacks.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { issuerIdOf } from './issuer-keys.ts';
import { findOffer, findOfferByCodeHash, markOfferRedeemed, reserveTxCodeTry } from './issuer-repository.ts';
import { PRE_AUTHORIZED_GRANT, sha256, txCodeHash } from './offer-document.ts';
import { checkWalletAttestation } from './wallet-attestation-check.ts';

/** OpenID4VCI §13.2 ("Transaction Code Guessing"): the code stops working after this many wrong tries. */
export const MAX_TX_CODE_TRIES = 5;

const invalidGrant = (why: string) => new CofferError('invalid_grant', why);

/**
 * The Pre-Authorized Code grant (§6.1) at Coffer's token endpoint. The transaction code is
 * checked before the code is spent, so a wrong one costs a try, never the offer; each try is
 * reserved before its code is compared, so at most five codes are ever compared, however many
 * requests race. The offer is then spent atomically: one token per offer.
 */
export function preAuthorizedGrant(deps: IssuerDeps): GrantExtension {
  return {
    metadata: {
      grantTypes: [PRE_AUTHORIZED_GRANT],
      members: {
        'pre-authorized_grant_anonymous_access_supported': true,
        authorization_details_types_supported: ['openid_credential'],
      },
      // HAIP issuers ask for a Wallet Attestation (OAuth 2.0 Attestation-Based Client
      // Authentication); wallets send one only when the metadata names the method.
      tokenEndpointAuthMethods: ['attest_jwt_client_auth'],
    },
    handles: (request) => request.grant_type === PRE_AUTHORIZED_GRANT,
    exchange: (request, jkt) => redeemPreAuthorizedCode(deps, request, jkt),
  };
}

export async function redeemPreAuthorizedCode(
  deps: IssuerDeps,
  request: TokenRequest,
  jkt: string | null,
): Promise<ExtensionTokenResponse> {
  const body = request.body ?? {};
  const code = body['pre-authorized_code'];
  if (typeof code !== 'string' || code.length === 0 || code.length > 128) {
    throw new CofferError('invalid_request', '/body/pre-authorized_code is required for this grant.', {
      details: [{ path: '/body/pre-authorized_code', message: 'is required' }],
    });
  }
  const offer = await findOfferByCodeHash(deps.db, sha256(code));
  if (!offer) throw invalidGrant('The pre-authorized code is not valid.');
  const nowIso = deps.now().toISOString();
  if (offer.expires_at <= nowIso) throw invalidGrant('The pre-authorized code has expired.');
  if (offer.status !== 'offered') throw invalidGrant('The pre-authorized code has been used.');
  const issuer = await deps.issuerKeys(offer.client_id);
  if (!issuer) throw invalidGrant('The pre-authorized code is not valid.');
  const issuerId = issuerIdOf(deps.config.publicUrl, offer.client_id);
  if (issuer.haip) {
    if (jkt === null)
      throw new CofferError('invalid_dpop_proof', 'This issuer follows HAIP: send a DPoP proof.');
    await checkWalletAttestation(deps, request, issuerId);
  }

  // Everything a request can get wrong besides the code is checked before a try is spent.
  const configurationIds = JSON.parse(offer.configuration_ids) as string[];
  const details = requestedDetails(body['authorization_details'], configurationIds, issuerId);
  const txCode = body['tx_code'];
  if (offer.tx_code_hash === null) {
    if (txCode !== undefined)
      throw new CofferError('invalid_request', 'This offer has no transaction code; send none.');
  } else {
    if (typeof txCode !== 'string' || txCode.length === 0) {
      throw new CofferError('invalid_request', 'This offer needs its transaction code (tx_code).');
    }
    const used = await reserveTxCodeTry(deps.db, offer.id, MAX_TX_CODE_TRIES);
    if (used === null) {
      const now = await findOffer(deps.db, offer.id);
      if (now?.status !== 'offered') throw invalidGrant('The pre-authorized code has been used.');
      throw invalidGrant('Too many wrong transaction codes: this offer cannot be redeemed any more.');
    }
    if (txCode.length > 64 || txCodeHash(offer.id, txCode) !== offer.tx_code_hash) {
      const left = MAX_TX_CODE_TRIES - used;
      await queueOfferEvent(deps, {
        offerId: offer.id,
        clientId: offer.client_id,
        callbackUrl: offer.callback_url,
        event: left === 0 ? 'tx_code_locked' : 'tx_code_failed',
        status: 'offered',
      });
      throw invalidGrant(
        left === 0
          ? 'The transaction code is wrong; that was the last try.'
          : `The transaction code is wrong; ${left} ${left === 1 ? 'try is' : 'tries are'} left.`,
      );
    }
  }

  const redeemed = await prepareOfferEvent(deps, {
    offerId: offer.id,
    clientId: offer.client_id,
    callbackUrl: offer.callback_url,
    event: 'redeemed',
    status: 'redeemed',
  });
  // Spending the code is a single-use mark, committed like the OP's code consumption: a power
  // cut may undo the last ones, and the offer still issues each configuration once (durable).
  const spent = await deps.writes.relaxed(async (tx) => {
    const changed = await markOfferRedeemed(tx, offer.id, nowIso, offer.tx_code_hash !== null);
    if (changed) await redeemed(tx);
    return changed;
  });
  if (!spent) throw invalidGrant('The pre-authorized code has been used.');
  const token = await signIssuanceToken(
    deps.keys,
    { asIssuer: deps.config.publicUrl, issuerId, offerId: offer.id, jkt },
    Math.floor(deps.now().getTime() / 1000),
  );
  return {
    access_token: token.token,
    token_type: jkt ? ('DPoP' as const) : ('Bearer' as const),
    expires_in: token.expiresIn,
    expire_in: token.expiresIn,
    ...(details ? { authorization_details: details } : {}),
  };
}

/**
 * authorization_details in a token request (§6.1.1) narrow the offer to some of its
 * configurations; each one's credential identifier is its configuration id.
 */
function requestedDetails(raw: unknown, offered: string[], issuerId: string) {
  if (raw === undefined) return undefined;
  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new CofferError('invalid_request', 'authorization_details is not JSON.');
    }
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > 10) {
    throw new CofferError('invalid_request', 'authorization_details must be a non-empty array.');
  }
  return parsed.map((item: unknown) => {
    const detail = item as Record<string, unknown>;
    if (detail?.['type'] !== 'openid_credential') {
      throw new CofferError(
        'invalid_request',
        'authorization_details entries must be of type openid_credential.',
      );
    }
    const id = detail['credential_configuration_id'];
    if (typeof id !== 'string' || !offered.includes(id)) {
      throw invalidGrant('authorization_details names a configuration the offer does not hold.');
    }
    const locations = detail['locations'];
    if (locations !== undefined && (!Array.isArray(locations) || !locations.includes(issuerId))) {
      throw new CofferError(
        'invalid_request',
        'authorization_details locations must name this credential issuer.',
      );
    }
    return { type: 'openid_credential', credential_configuration_id: id, credential_identifiers: [id] };
  });
}
