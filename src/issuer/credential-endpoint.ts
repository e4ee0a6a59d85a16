import { randomBytes, randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { isUniqueViolation } from '../db/dialect.ts';
import type { IssuerOffersTable } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { CredentialToIssue, IssuedCredential } from '../formats/credential-issuance.ts';
import { issueJwtVc } from '../formats/jwt-vc-json/issue-credential.ts';
import { issueLdpVc } from '../formats/ldp-vc/issue-credential.ts';
import { issueMdoc } from '../formats/mso-mdoc/issue-credential.ts';
import { issueSdJwtVc } from '../formats/sd-jwt-vc/issue-credential.ts';
import { claimsFromProfile, offeredClaims } from './claims.ts';
import type { CredentialConfiguration } from './configurations.ts';
import type { IssuanceToken } from './issuance-tokens.ts';
import { prepareOfferEvent } from './issuer-callbacks.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import type { IssuerKeys } from './issuer-keys.ts';
import { advertisedBatchSize } from './issuer-metadata.ts';
import {
  findConfigurations,
  findOffer,
  insertIssuedCredential,
  issuedConfigurationsOf,
  listConfigurations,
  lockOffer,
  markOfferIssued,
  updateOffer,
} from './issuer-repository.ts';
import type { Work } from './issuer-writes.ts';
import { type ProvenKey, verifyKeyProofs } from './key-proofs.ts';
import { sha256 } from './offer-document.ts';
import { offerClaimsContext } from './offers.ts';
import { countStatusEntry, drawStatusEntry, kindOfFormat, statusListUri } from './status-lists.ts';

const alreadyIssued = () =>
  requestError('credential_request_denied', 'This credential has been issued already for this offer.');
const offerOver = () =>
  requestError('credential_request_denied', 'This offer is over; nothing more is issued for it.');

/** How long a wallet should wait before asking the Deferred Credential Endpoint again. */
export const DEFERRED_INTERVAL = 5;
const DEFAULT_VALIDITY = 365 * 24 * 3600;
export const deferredContext = (offerId: string) => `issuer-offers/${offerId}/deferred`;

const requestError = (
  code:
    | 'invalid_credential_request'
    | 'unknown_credential_configuration'
    | 'unknown_credential_identifier'
    | 'credential_request_denied',
  why: string,
) => new CofferError(code, why, { status: 400 });

export interface CredentialRequest {
  credential_identifier?: string | undefined;
  credential_configuration_id?: string | undefined;
  proofs?: { jwt?: string[]; attestation?: string[] } | undefined;
}

export type CredentialResponse =
  | { kind: 'issued'; body: { credentials: { credential: IssuedCredential }[]; notification_id: string } }
  | { kind: 'deferred'; body: { transaction_id: string; interval: number } };

/** Deferred issuance remembers what the request proved, until the claims arrive. */
interface DeferredRequest {
  configurationId: string;
  keys: ProvenKey[];
}

/**
 * The Credential Endpoint (§8): the token names its offer; the request names one of the offer's
 * configurations; the proofs give one key per copy. The offer's claims are opened, each copy
 * signed and recorded (id, configuration, status entry, hash — never the claims), and once every
 * configuration is issued the claims are deleted.
 */
export async function issueCredentials(
  deps: IssuerDeps,
  keys: IssuerKeys,
  token: IssuanceToken,
  request: CredentialRequest,
): Promise<CredentialResponse> {
  const offer = await findOffer(deps.db, token.offerId);
  if (!offer || offer.client_id !== keys.clientId)
    throw new CofferError('invalid_token', 'The access token names no offer of this issuer.');
  if (!['redeemed', 'deferred', 'issued'].includes(offer.status)) throw offerOver();
  const configurationId = configurationOf(request, JSON.parse(offer.configuration_ids) as string[]);
  const configuration = (await findConfigurations(deps.db, keys.clientId, [configurationId])).get(
    configurationId,
  );
  if (!configuration)
    throw requestError('unknown_credential_configuration', 'The configuration no longer exists.');
  const count = (outcome: 'issued' | 'deferred' | 'refused', copies = 1) =>
    deps.metrics?.issuance(keys.clientId, configuration.format, outcome, copies);
  try {
    const response = await issueUnder(deps, keys, offer, configurationId, configuration, request);
    count(response.kind, response.kind === 'issued' ? response.body.credentials.length : 1);
    return response;
  } catch (error) {
    count('refused');
    throw error;
  }
}

/** Issues (or defers) one configuration of an offer whose token and configuration were checked. */
async function issueUnder(
  deps: IssuerDeps,
  keys: IssuerKeys,
  offer: Selectable<IssuerOffersTable>,
  configurationId: string,
  configuration: CredentialConfiguration,
  request: CredentialRequest,
): Promise<CredentialResponse> {
  if ((await issuedConfigurationsOf(deps.db, offer.id)).has(configurationId)) throw alreadyIssued();
  // The metadata's batch_size is issuer-wide: up to that many proofs are taken, and the
  // configuration's own batch_size copies issued, on the first keys.
  const proven = (
    await verifyKeyProofs(deps, request.proofs, {
      issuerId: keys.issuerId,
      keyAttestation: keys.haip || configuration.key_attestations_required === true,
      batchSize: {
        atLeast: configuration.batch_size ?? 1,
        advertised: async () => advertisedBatchSize(await listConfigurations(deps.db, keys.clientId)),
      },
    })
  ).slice(0, configuration.batch_size ?? 1);
  const claims = await claimsOf(deps, offer, configurationId, configuration);
  if (claims === null) return deferIssuance(deps, offer, { configurationId, keys: proven });
  return {
    kind: 'issued',
    body: await signAndRecord(deps, keys, offer, configurationId, configuration, claims, proven),
  };
}

/** §8.2: exactly one of credential_identifier (after authorization_details) and credential_configuration_id. */
function configurationOf(request: CredentialRequest, offered: string[]): string {
  const { credential_identifier: identifier, credential_configuration_id: configurationId } = request;
  if ((identifier === undefined) === (configurationId === undefined)) {
    throw requestError(
      'invalid_credential_request',
      'Send either credential_identifier or credential_configuration_id.',
    );
  }
  if (identifier !== undefined && !offered.includes(identifier)) {
    throw requestError(
      'unknown_credential_identifier',
      'The credential_identifier is not one this token fetches.',
    );
  }
  if (configurationId !== undefined && !offered.includes(configurationId)) {
    throw requestError(
      'unknown_credential_configuration',
      'The credential_configuration_id is not one this token fetches.',
    );
  }
  return (identifier ?? configurationId)!;
}

/** The offer's sealed claims for this configuration, the person's profile, or null: deferred. */
async function claimsOf(
  deps: IssuerDeps,
  offer: Selectable<IssuerOffersTable>,
  configurationId: string,
  configuration: CredentialConfiguration,
): Promise<Record<string, unknown> | null> {
  if (configuration.from_profile) {
    if (offer.user_id === null)
      throw requestError('credential_request_denied', 'This offer names no account to read a profile from.');
    return claimsFromProfile(configuration, await deps.profileOf(offer.user_id));
  }
  if (offer.claims_sealed === null) return null;
  const all = JSON.parse(deps.cipher.decrypt(offer.claims_sealed, offerClaimsContext(offer.id))) as Record<
    string,
    Record<string, unknown>
  >;
  const claims = all[configurationId];
  return claims === undefined ? null : offeredClaims(configuration, claims, offer.legacy_w3c_claims === 1);
}

async function deferIssuance(
  deps: IssuerDeps,
  offer: Selectable<IssuerOffersTable>,
  deferred: DeferredRequest,
): Promise<CredentialResponse> {
  const transactionId = randomBytes(24).toString('base64url');
  const event = await prepareOfferEvent(deps, {
    offerId: offer.id,
    clientId: offer.client_id,
    callbackUrl: offer.callback_url,
    event: 'deferred',
    status: 'deferred',
  });
  const deferredNow = await deps.writes.durable(async (tx) => {
    const updated = await tx
      .updateTable('issuer_offers')
      .set({
        status: 'deferred',
        transaction_id_hash: sha256(transactionId),
        deferred_sealed: deps.cipher.encrypt(JSON.stringify(deferred), deferredContext(offer.id)),
      })
      .where('id', '=', offer.id)
      .where('transaction_id_hash', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) return false;
    await event(tx);
    return true;
  });
  if (!deferredNow) {
    throw requestError('credential_request_denied', 'This offer has a deferred request already.');
  }
  return { kind: 'deferred', body: { transaction_id: transactionId, interval: DEFERRED_INTERVAL } };
}

/**
 * The Deferred Credential Endpoint (§9): the transaction id names the offer; until its claims
 * arrive the answer is `issuance_pending`, then the credentials, and the transaction is spent.
 */
export async function issueDeferred(
  deps: IssuerDeps,
  keys: IssuerKeys,
  token: IssuanceToken,
  transactionId: string,
) {
  const offer = await deps.db
    .selectFrom('issuer_offers')
    .selectAll()
    .where('transaction_id_hash', '=', sha256(transactionId))
    .executeTakeFirst();
  if (!offer || offer.id !== token.offerId || offer.client_id !== keys.clientId) {
    throw new CofferError('invalid_transaction_id', 'The transaction_id is not valid.', { status: 400 });
  }
  if (offer.claims_sealed === null) {
    throw new CofferError('issuance_pending', 'The credential is not ready yet; ask again later.', {
      status: 400,
    });
  }
  const deferred = JSON.parse(
    deps.cipher.decrypt(offer.deferred_sealed!, deferredContext(offer.id)),
  ) as DeferredRequest;
  const spent = await updateOffer(
    deps.db,
    offer.id,
    { transaction_id_hash: offer.transaction_id_hash },
    { transaction_id_hash: null, deferred_sealed: null },
  );
  if (!spent)
    throw new CofferError('invalid_transaction_id', 'The transaction_id has been used.', { status: 400 });
  const configuration = (await findConfigurations(deps.db, keys.clientId, [deferred.configurationId])).get(
    deferred.configurationId,
  );
  if (!configuration) throw requestError('credential_request_denied', 'The configuration no longer exists.');
  const claims = (await claimsOf(deps, offer, deferred.configurationId, configuration)) ?? {};
  return signAndRecord(deps, keys, offer, deferred.configurationId, configuration, claims, deferred.keys);
}

async function signAndRecord(
  deps: IssuerDeps,
  keys: IssuerKeys,
  offer: Selectable<IssuerOffersTable>,
  configurationId: string,
  configuration: CredentialConfiguration,
  claims: Record<string, unknown>,
  proven: ProvenKey[],
) {
  const now = deps.now();
  const notificationId = randomBytes(16).toString('base64url');
  const finish = await finishingWork(deps, offer);
  const credentials: { credential: IssuedCredential }[] = [];
  for (const [index, key] of proven.entries()) {
    const copy = { configurationId, configuration, claims, key, notificationId, now, first: index === 0 };
    // The last copy's transaction also closes the offer when nothing else is left to issue.
    const last = index === proven.length - 1 ? finish : undefined;
    credentials.push({ credential: await recordCopy(deps, keys, offer, copy, last) });
  }
  return { credentials, notification_id: notificationId };
}

interface Copy {
  configurationId: string;
  configuration: CredentialConfiguration;
  claims: Record<string, unknown>;
  key: ProvenKey;
  notificationId: string;
  now: Date;
  /** The request's first copy: it claims the configuration, once per offer. */
  first: boolean;
}

/**
 * Signs one copy and records it in one transaction. With a status entry, the index is drawn at
 * random and reserved by the row's insert (the list and index are unique together); in the rare
 * case another credential took it meanwhile, the copy is signed again with another index.
 */
async function recordCopy(
  deps: IssuerDeps,
  keys: IssuerKeys,
  offer: Selectable<IssuerOffersTable>,
  copy: Copy,
  finish: Work<void> | undefined,
): Promise<IssuedCredential> {
  const { configuration, now } = copy;
  const nowIso = now.toISOString();
  const id = `urn:uuid:${randomUUID()}`;
  const times = credentialTimes(
    now,
    configuration.validity_seconds ?? DEFAULT_VALIDITY,
    configuration.format,
  );
  for (let attempt = 0; attempt < 8; attempt++) {
    // The list belongs to the key that signs this credential (status-lists.ts).
    const entry = configuration.status
      ? await drawStatusEntry(deps.db, keys, kindOfFormat(configuration.format), nowIso)
      : null;
    const issued = await signCredential(deps, keys, configuration, times.signedAt, {
      id,
      type: configuration.vct ?? configuration.doctype ?? configuration.type!,
      claims: copy.claims,
      alwaysDisclosed: configuration.claims
        .filter((c) => c.selectively_disclosable === false)
        .map((c) => c.path),
      holder: copy.key.did ? { did: copy.key.did } : { jwk: copy.key.jwk },
      validFrom: times.validFrom,
      validUntil: times.validUntil,
      ...(entry
        ? { status: { uri: statusListUri(deps.config.publicUrl, entry.listId), index: entry.index } }
        : {}),
      ...(configuration.display ? { display: configuration.display } : {}),
    });
    let refusal: CofferError | undefined;
    try {
      await deps.writes.durable(async (tx) => {
        // Two requests for the same configuration of one offer (a wallet racing itself) both
        // passed the check before signing; here, in turn, only the first records its copies.
        // An erasure may have cancelled the offer since it was read: nothing is issued then.
        if (copy.first) {
          if ((await lockOffer(tx, offer.id)) === 'cancelled') {
            refusal = offerOver();
            return;
          }
          if ((await issuedConfigurationsOf(tx, offer.id)).has(copy.configurationId)) {
            refusal = alreadyIssued();
            return;
          }
        }
        await insertIssuedCredential(tx, {
          id,
          client_id: keys.clientId,
          offer_id: offer.id,
          configuration_id: copy.configurationId,
          format: configuration.format,
          status: 'valid',
          status_list_id: entry?.listId ?? null,
          status_index: entry?.index ?? null,
          credential_hash: sha256(typeof issued === 'string' ? issued : JSON.stringify(issued)),
          notification_id: copy.notificationId,
          issued_at: nowIso,
          expires_at: times.validUntil.toISOString(),
        });
        if (entry) await countStatusEntry(tx, entry.listId);
        if (finish) await finish(tx);
        // The wallet acted; it is the person's when the offer names an account. Never the claims.
        await deps.audit?.record(tx, {
          clientId: keys.clientId,
          actor: offer.user_id === null ? 'wallet' : `person:${offer.user_id}`,
          type: 'issuer.credential_issue',
          targets: { offer_id: offer.id, configuration_id: copy.configurationId, credential_id: id },
        });
      });
      if (refusal) throw refusal;
      return issued;
    } catch (error) {
      if (entry && isUniqueViolation(error)) continue;
      throw error;
    }
  }
  throw new CofferError('server_error', 'No free status list index was found; try again.');
}

/**
 * Once every configuration of the offer is issued, its claims go and the offer is issued; the
 * check runs inside the transaction that records the last copy, so concurrent requests for the
 * offer's other configurations see each other's rows.
 */
async function finishingWork(deps: IssuerDeps, offer: Selectable<IssuerOffersTable>): Promise<Work<void>> {
  const ids = JSON.parse(offer.configuration_ids) as string[];
  const event = await prepareOfferEvent(deps, {
    offerId: offer.id,
    clientId: offer.client_id,
    callbackUrl: offer.callback_url,
    event: 'issued',
    status: 'issued',
  });
  return async (tx) => {
    const done = await issuedConfigurationsOf(tx, offer.id);
    if (!ids.every((id) => done.has(id))) return;
    await markOfferIssued(tx, offer.id);
    await event(tx);
  };
}

const HOUR_MS = 3600_000;
const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/**
 * The times a credential carries (iat, nbf, exp of an SD-JWT VC; validFrom, validUntil of a W3C
 * credential), rounded down to the hour: the exact instant of issuance would let verifiers link
 * the copies of a batch, or match a presentation to the issuance log (SD-JWT §10.1, privacy; the
 * suite's VCIEnsureBatchTimeClaimsNotLinkable). The expiry keeps its exact time only when
 * rounding would put it in the past (a validity under an hour). An mdoc keeps exact times: its
 * validityInfo.signed must lie within the issuer certificate's validity and not after validFrom
 * (ISO/IEC 18013-5, the MSO's validityInfo), which an earlier, rounded instant could break.
 */
export function credentialTimes(now: Date, validitySeconds: number, format: string) {
  const until = now.getTime() + validitySeconds * 1000;
  if (format === 'mso_mdoc') return { signedAt: now, validFrom: now, validUntil: new Date(until) };
  const from = floorHour(now.getTime());
  return {
    signedAt: new Date(from),
    validFrom: new Date(from),
    validUntil: new Date(floorHour(until) > now.getTime() ? floorHour(until) : until),
  };
}

function signCredential(
  deps: IssuerDeps,
  keys: IssuerKeys,
  configuration: CredentialConfiguration,
  now: Date,
  credential: CredentialToIssue,
): Promise<IssuedCredential> {
  switch (configuration.format) {
    case 'dc+sd-jwt':
      return issueSdJwtVc(keys.material, credential, now);
    case 'mso_mdoc':
      return issueMdoc(keys.material, credential, now);
    case 'jwt_vc_json':
      return issueJwtVc(keys.material, credential, now);
    case 'ldp_vc':
      return issueLdpVc(keys.material, credential, now, deps.bbs2023);
  }
}
