import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { AuditContext } from '../audit/audit-events.ts';
import { isForeignKeyViolation } from '../db/dialect.ts';
import type { IssuerOfferStatus } from '../db/schema.ts';
import { CofferError, forbidden, invalidField, notFound } from '../errors.ts';
import { checkOutboundTarget, OutboundError } from '../http/outbound.ts';
import { checkClaimsFor } from './claims.ts';
import type { CredentialConfiguration } from './configurations.ts';
import { prepareOfferEvent } from './issuer-callbacks.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { issuerIdOf } from './issuer-keys.ts';
import {
  findConfigurations,
  findOffer,
  insertOffer,
  issuedCredentialsOf,
  offerEventsOf,
  updateOffer,
} from './issuer-repository.ts';
import type { CreateOfferBody } from './issuer-schemas.ts';
import { credentialOfferOf, newTxCode, preAuthorizedCodeOf, sha256, txCodeHash } from './offer-document.ts';
import { issuedCredentialView } from './status-changes.ts';

const DEFAULT_EXPIRES_IN = 600;
export const offerClaimsContext = (offerId: string) => `issuer-offers/${offerId}/claims`;

export const offerPaths = (publicUrl: string, clientId: number, offerId: string) => {
  const issuerId = issuerIdOf(publicUrl, clientId);
  const credentialOfferUri = `${issuerId}/offers/${offerId}`;
  const query = `?credential_offer_uri=${encodeURIComponent(credentialOfferUri)}`;
  return {
    credentialOfferUri,
    offerLink: `openid-credential-offer://${query}`,
    /** HAIP 1.0 (Credential Offer): HAIP wallets answer the custom scheme haip://. */
    haipLink: `haip://${query}`,
    page: `${publicUrl}/offer/${offerId}`,
  };
};

/**
 * The caller must be an issuer (`coffer issuer enable`). Its opened keys are cached (an issuer is
 * never disabled), so an API call does not read and open the issuer's row again.
 */
export async function requireIssuer(deps: IssuerDeps, clientId: number) {
  const keys = await deps.issuerKeys(clientId);
  if (!keys) throw forbidden('This client is not an issuer; enable it with `coffer issuer enable`.');
  return keys;
}

/** `POST /v1/issuer/offers`: the tenant offers credentials to a person's wallet. */
export async function createOffer(
  deps: IssuerDeps,
  clientId: number,
  body: Static<typeof CreateOfferBody>,
  context: AuditContext,
) {
  const issuer = await requireIssuer(deps, clientId);
  const configurations = await findConfigurations(deps.db, clientId, body.configuration_ids);
  body.configuration_ids.forEach((id, index) => {
    if (!configurations.has(id))
      throw invalidField(`/body/configuration_ids/${index}`, `names no configuration (${id})`);
  });
  const grant = body.grant ?? 'pre-authorized_code';
  if (body.user_id !== undefined) await checkUserOfTenant(deps, clientId, body.user_id);
  const claims = body.claims === undefined ? null : checkOfferClaims(configurations, body);
  if (
    grant === 'pre-authorized_code' &&
    [...configurations.values()].some((c) => c.from_profile) &&
    body.user_id === undefined
  ) {
    throw invalidField(
      '/body/user_id',
      'is required: a from_profile configuration under a pre-authorized code needs the account',
    );
  }
  if (body.tx_code && grant !== 'pre-authorized_code') {
    throw invalidField('/body/tx_code', 'goes with the pre-authorized_code grant only');
  }
  const callbackUrl = body.callback_url === undefined ? null : checkCallbackUrl(deps, body.callback_url);

  const id = randomBytes(16).toString('base64url');
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + (body.expires_in ?? DEFAULT_EXPIRES_IN) * 1000).toISOString();
  const txCodeSpec = body.tx_code
    ? { length: body.tx_code.length ?? 6, input_mode: body.tx_code.input_mode ?? 'numeric' }
    : undefined;
  const txCode = txCodeSpec ? newTxCode(txCodeSpec.length, txCodeSpec.input_mode) : undefined;
  const row = {
    id,
    client_id: clientId,
    configuration_ids: JSON.stringify(body.configuration_ids),
    grant_type: grant,
    pre_authorized_code_hash:
      grant === 'pre-authorized_code'
        ? sha256(preAuthorizedCodeOf(deps.secrets.preAuthorizedCode, id))
        : null,
    issuer_state: grant === 'authorization_code' ? randomBytes(16).toString('base64url') : null,
    tx_code_hash: txCode ? txCodeHash(id, txCode) : null,
    tx_code_spec: body.tx_code
      ? JSON.stringify({
          ...txCodeSpec,
          ...(body.tx_code.description ? { description: body.tx_code.description } : {}),
        })
      : null,
    claims_sealed: claims ? deps.cipher.encrypt(JSON.stringify(claims), offerClaimsContext(id)) : null,
    user_id: body.user_id ?? null,
    status: 'offered',
    callback_url: callbackUrl,
    transaction_id_hash: null,
    deferred_sealed: null,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    redeemed_at: null,
  } as const;
  const event = await prepareOfferEvent(deps, {
    offerId: id,
    clientId,
    callbackUrl,
    event: 'offered',
    status: 'offered',
  });
  try {
    await deps.writes.durable(async (tx) => {
      await insertOffer(tx, row);
      await event(tx);
      await deps.audit?.record(tx, {
        ...context,
        clientId,
        type: 'issuer.offer_create',
        targets: { offer_id: id, ...(row.user_id !== null ? { user_id: row.user_id } : {}) },
      });
    });
  } catch (error) {
    // The account was erased between the check above and this write.
    if (row.user_id !== null && isForeignKeyViolation(error)) throw notAUser();
    throw error;
  }
  const paths = offerPaths(deps.config.publicUrl, clientId, id);
  return {
    id,
    credential_offer_uri: paths.credentialOfferUri,
    offer_link: paths.offerLink,
    ...(issuer.haip ? { haip_offer_link: paths.haipLink } : {}),
    page: paths.page,
    ...(txCode ? { tx_code: txCode } : {}),
    expires_at: expiresAt,
  };
}

function checkOfferClaims(
  configurations: Map<string, CredentialConfiguration>,
  body: { configuration_ids: string[]; claims?: Record<string, object> | undefined },
): Record<string, Record<string, unknown>> {
  const claims = (body.claims ?? {}) as Record<string, Record<string, unknown>>;
  for (const name of Object.keys(claims)) {
    if (!body.configuration_ids.includes(name))
      throw invalidField(`/body/claims/${name}`, 'is not an offered configuration');
  }
  for (const [id, configuration] of configurations) {
    if (configuration.from_profile) continue;
    const given = claims[id];
    if (given === undefined)
      throw invalidField(
        `/body/claims/${id}`,
        'is required (or leave out claims to defer every configuration)',
      );
    checkClaimsFor(configuration, given, `/body/claims/${id}`);
  }
  return claims;
}

async function checkUserOfTenant(deps: IssuerDeps, clientId: number, userId: number) {
  const user = await deps.db
    .selectFrom('users')
    .select(['user_id', 'tenant_id'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!user || user.tenant_id !== clientId) throw notAUser();
}

const notAUser = () => invalidField('/body/user_id', 'is not a user of this tenant');

function checkCallbackUrl(deps: IssuerDeps, url: string): string {
  try {
    return checkOutboundTarget(url, deps.config.allowPrivateTargets).href;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    throw invalidField('/body/callback_url', error.message);
  }
}

/** The offer by reference (§4.1.3): the wallet's GET of credential_offer_uri. Expired or spent: 404. */
export async function offerByReference(deps: IssuerDeps, clientId: number, offerId: string) {
  const offer = await findOffer(deps.db, offerId);
  if (
    !offer ||
    offer.client_id !== clientId ||
    offer.status !== 'offered' ||
    offer.expires_at <= deps.now().toISOString()
  ) {
    throw notFound('The credential offer');
  }
  const issuerId = issuerIdOf(deps.config.publicUrl, clientId);
  const configurationIds = JSON.parse(offer.configuration_ids) as string[];
  return offer.grant_type === 'pre-authorized_code'
    ? credentialOfferOf(issuerId, configurationIds, {
        kind: 'pre-authorized_code',
        preAuthorizedCode: offerCode(deps, offer.id, offer.pre_authorized_code_hash),
        txCode: offer.tx_code_spec ? JSON.parse(offer.tx_code_spec) : undefined,
      })
    : credentialOfferOf(issuerId, configurationIds, {
        kind: 'authorization_code',
        issuerState: offer.issuer_state!,
      });
}

/**
 * The offer's pre-authorized code, derived again: under the master key that made it, which after
 * a master-key rotation is a previous key of the ring until the offer expires.
 */
function offerCode(deps: IssuerDeps, offerId: string, codeHash: string | null): string {
  const code = preAuthorizedCodeOf(deps.secrets.preAuthorizedCode, offerId);
  if (sha256(code) === codeHash) return code;
  for (const key of deps.secrets.previousPreAuthorizedCodes ?? []) {
    const previous = preAuthorizedCodeOf(key, offerId);
    if (sha256(previous) === codeHash) return previous;
  }
  return code;
}

/** `GET /v1/issuer/offers/{id}`: where the offer stands, what it issued, what happened. */
export async function offerTracking(deps: IssuerDeps, clientId: number, offerId: string) {
  await requireIssuer(deps, clientId);
  const offer = await findOffer(deps.db, offerId);
  if (!offer || offer.client_id !== clientId) throw notFound('The offer');
  const expired = offer.status === 'offered' && offer.expires_at <= deps.now().toISOString();
  const credentials = await issuedCredentialsOf(deps.db, clientId, offerId);
  return {
    id: offer.id,
    status: (expired ? 'expired' : offer.status) as IssuerOfferStatus,
    configuration_ids: JSON.parse(offer.configuration_ids) as string[],
    created_at: offer.created_at,
    expires_at: offer.expires_at,
    credentials: credentials.map((row) => issuedCredentialView(deps.config.publicUrl, row)),
    events: await offerEventsOf(deps.db, offerId),
  };
}

/** `PUT /v1/issuer/offers/{id}/claims`: the claims of a deferred offer arrive. */
export async function completeDeferredOffer(
  deps: IssuerDeps,
  clientId: number,
  offerId: string,
  claims: Record<string, Record<string, unknown>>,
) {
  await requireIssuer(deps, clientId);
  const offer = await findOffer(deps.db, offerId);
  if (!offer || offer.client_id !== clientId) throw notFound('The offer');
  if (offer.claims_sealed !== null || !['offered', 'redeemed', 'deferred'].includes(offer.status)) {
    throw new CofferError('conflict', 'This offer has its claims already, or is over.');
  }
  const ids = JSON.parse(offer.configuration_ids) as string[];
  const configurations = await findConfigurations(deps.db, clientId, ids);
  const checked = checkOfferClaims(configurations, { configuration_ids: ids, claims });
  const updated = await updateOffer(
    deps.db,
    offerId,
    { claims_sealed: null },
    {
      claims_sealed: deps.cipher.encrypt(JSON.stringify(checked), offerClaimsContext(offerId)),
    },
  );
  if (!updated) throw new CofferError('conflict', 'This offer has its claims already.');
  return offerTracking(deps, clientId, offerId);
}
