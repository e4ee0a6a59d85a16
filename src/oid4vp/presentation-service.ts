import type { JsonWebKey, X509Certificate } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Audit, AuditActor, AuditEvent } from '../audit/audit-events.ts';
import { credentialContext, readPrepared } from '../credentials/credential-service.ts';
import { copyKeyContext, openIssuerDisplay } from '../credentials/held-credential-contexts.ts';
import { type CredentialRef, type RecordHistory, typesOf } from '../credentials/history-events.ts';
import type { Database } from '../db/schema.ts';
import { rememberNonce } from '../db/seen-once.ts';
import { CofferError } from '../errors.ts';
import type { Audience, ParsedCredential } from '../formats/credential-format.ts';
import { credentialTypeName, issuerName, namesInCredential } from '../formats/display-names.ts';
import type { FormatRegistry } from '../formats/registry.ts';
import type { OutboundClient } from '../http/outbound.ts';
import { finishInteraction } from '../interaction/interaction-repository.ts';
import type { InteractionDeps } from '../interaction/interaction-service.ts';
import { gone, liveInteraction, startInteraction } from '../interaction/interaction-service.ts';
import { identityOfSession } from '../interaction/session-identity.ts';
import type { SessionRow } from '../interaction/session-repository.ts';
import { parseCertificate } from '../keys/certificate-chain.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { jwkThumbprint } from '../keys/jwk-thumbprint.ts';
import type { StatusChecker } from '../status/status-checker.ts';
import type { EncryptedStore } from '../storage/index.ts';
import { isEntityIdentifier } from '../trust/federation/entity-statement.ts';
import { TrustError } from '../trust/trust-error.ts';
import { type IssuerServices, serviceVouchingFor } from '../trust/trusted-lists/trusted-list-resolver.ts';
import { findAccountsOfIdentity, findHolderKeys } from '../users/user-repository.ts';
import { holderKeyContext } from '../users/user-service.ts';
import {
  type AuthorizationRequestDeps,
  type ErrorReturn,
  type PresentationRequest,
  resolveAuthorizationRequest,
} from './authorization-request.ts';
import {
  type CredentialTrust,
  chooseCredentials,
  type DcqlEvaluation,
  evaluateDcql,
  type HeldCredential,
  type Selections,
} from './dcql-matching.ts';
import { Oid4vpError } from './oid4vp-errors.ts';
import { findCredentialsOfAccounts, takeCopy } from './presentation-repository.ts';
import { DeliveryError, deliverResponse, type ResponseParameters } from './response-delivery.ts';
import { chooseEncryption, type EncryptionChoice } from './response-encryption.ts';
import {
  bindTransactionData,
  queriesWithTransactionData,
  TRANSACTION_DATA_FORMATS,
  transactionDataClaims,
} from './transaction-data.ts';

export interface PresentationDeps {
  db: Kysely<Database>;
  store: EncryptedStore;
  cipher: FieldCipher;
  /** The credential formats: matching input, consent descriptions and presentations. */
  formats: FormatRegistry;
  /** ISSUER_TRUST_ANCHORS, for the consent's issuer marking. */
  issuerTrustAnchors: X509Certificate[];
  requests: AuthorizationRequestDeps;
  outbound: OutboundClient;
  interactions: InteractionDeps;
  /** Revoked and suspended credentials are never offered (DESIGN.md, The person's wallet). */
  status: StatusChecker;
  /** The wallet history's presentation events (wallet/wallet-history.ts). */
  recordHistory: RecordHistory;
  /**
   * Told where the accounts' credentials were delivered (the response URI), so that an answer to
   * this deployment's own verifier is erased with the account (app.ts links them).
   */
  delivered?: (target: string, userIds: number[]) => Promise<void>;
  /** Records each consent given or refused (`wallet.consent`). */
  audit?: Audit;
}

/**
 * A nonce stays remembered for a day, and longer where a request object says it is valid longer:
 * far longer than an interaction lives, and never shorter than the request could be replayed.
 */
const NONCE_MEMORY_SECONDS = 24 * 3600;

export type AuthorizeOutcome =
  | { kind: 'interaction'; interactionId: string }
  | { kind: 'redirect'; url: string }
  /** `error` is the OAuth / OpenID4VP error code (§8.5), shown beside the sentence for the verifier's developers. */
  | { kind: 'error_page'; error: string; title: string; message: string };

const errorParameters = (error: Oid4vpError): ResponseParameters => ({
  error: error.code,
  error_description: error.message,
});

/** Sends an error back by the request's response mode, or explains on a page where that failed. */
async function answerWithError(
  deps: PresentationDeps,
  to: ErrorReturn & { metadata: PresentationRequest['metadata'] | null },
  error: Oid4vpError,
): Promise<AuthorizeOutcome> {
  try {
    const delivery = await deliverResponse(to, errorParameters(error), deps.outbound);
    if (delivery.redirectTo) return { kind: 'redirect', url: delivery.redirectTo };
    return {
      kind: 'error_page',
      error: error.code,
      title: 'The request was refused',
      message: `The verifier was told why: ${error.message}.`,
    };
  } catch (failure) {
    if (!(failure instanceof DeliveryError)) throw failure;
    return {
      kind: 'error_page',
      error: error.code,
      title: 'The request was refused',
      message: `${error.message}; and ${failure.message}.`,
    };
  }
}

/**
 * GET /v1/oid4vp/authorize: validates the request (§5), remembers its nonce, and starts the
 * interaction in which the person logs in (unless a session says who they are) and consents.
 */
export async function startPresentation(
  deps: PresentationDeps,
  query: Record<string, unknown>,
  session: SessionRow | undefined,
): Promise<AuthorizeOutcome> {
  const outcome = await resolveAuthorizationRequest(query, deps.requests);
  if (!outcome.ok) {
    if (outcome.returnTo) return answerWithError(deps, outcome.returnTo, outcome.error);
    return {
      kind: 'error_page',
      error: outcome.error.code,
      title: 'This request cannot be answered',
      message: `${outcome.error.message}.`,
    };
  }
  const request = outcome.request;
  const nowSeconds = Math.floor(deps.requests.now().getTime() / 1000);
  const identity = await identityOfSession(deps, session);
  // One commit for both: the nonce is spent together with the interaction that answers it.
  const interactionId = await deps.db.transaction().execute(async (tx) => {
    const fresh = await rememberNonce(
      tx,
      request.verifier.clientId,
      request.nonce,
      nowSeconds,
      Math.max(NONCE_MEMORY_SECONDS, (request.expiresAt ?? 0) - nowSeconds + 300),
    );
    if (!fresh) return null;
    return startInteraction(
      { ...deps.interactions, db: tx },
      {
        kind: 'consent',
        clientId: request.verifier.registeredClientId,
        params: JSON.stringify(request),
        identity,
      },
    );
  });
  if (interactionId === null) {
    return answerWithError(
      deps,
      request,
      new Oid4vpError('invalid_request', 'this nonce was used in an earlier request; send a fresh one'),
    );
  }
  return { kind: 'interaction', interactionId };
}

interface HeldByAccount extends HeldCredential {
  userId: number;
  did: string;
  stored: unknown;
  credentialPk: number;
  /** Its prepared statements' block (credential-service.ts, readPrepared), else null. */
  preparedCid: string | null;
  /** Received by OpenID4VCI: its copies carry their own holder keys (received-credentials.ts). */
  received: boolean;
  /** Received by OpenID4VCI: the issuer's display, sealed (opened for the consent's candidates only). */
  issuerDisplaySealed: string | null;
  /** Bound to the account's hosted key (SD-JWT cnf, mdoc deviceKey): its presentations prove possession. */
  keyBound: boolean;
}

/** Whether a credential is within its validity period at `now`. */
function validNow(parsed: ParsedCredential, now: Date): boolean {
  const { validFrom, validUntil } = parsed.summary;
  if (validFrom !== null && new Date(validFrom) > now) return false;
  return !(validUntil !== null && new Date(validUntil) <= now);
}

/**
 * Every credential of every account of the proven identity, in a format the request asks for,
 * that still passes the store's policy and is valid now: one that expired after it was stored
 * would only be refused by the verifier, and as the newest it would be the default choice.
 * Credentials of other formats are not even decrypted.
 */
async function heldCredentials(
  deps: PresentationDeps,
  accountIds: number[],
  formats: string[],
): Promise<HeldByAccount[]> {
  const rows = await findCredentialsOfAccounts(deps.db, accountIds, formats);
  const context = { now: deps.requests.now(), issuerTrustAnchors: deps.issuerTrustAnchors };
  const held = await Promise.all(
    rows.map(async (row): Promise<HeldByAccount | undefined> => {
      const stored = await deps.store.getEncrypted(row.cid, credentialContext(row.did));
      const format = deps.formats.get(row.format);
      let parsed: ParsedCredential;
      try {
        parsed = format.parse(stored, context);
      } catch {
        return undefined;
      }
      if (!validNow(parsed, context.now)) return undefined;
      const reference = format.statusReference(stored, context);
      if (reference) {
        // A list that cannot be checked does not block: the verifier checks status itself.
        const { state } = await deps.status.check(reference);
        if (state === 'revoked' || state === 'suspended') return undefined;
      }
      const keyBound = parsed.holder.kind === 'key';
      return {
        id: row.credential_id,
        format: format.id,
        summary: parsed.summary,
        dcql: await format.dcqlInput(stored, parsed.summary),
        holderBinding: keyBound || (parsed.holder.kind === 'did' && parsed.holder.did === row.did),
        keyBound,
        stored,
        userId: row.user_id,
        did: row.did,
        credentialPk: row.credential_pk,
        preparedCid: row.prepared_cid,
        received: row.issuer_client_id === null,
        issuerDisplaySealed: row.issuer_display_sealed,
      };
    }),
  );
  return held.filter((credential) => credential !== undefined);
}

interface ConsentInteraction {
  interactionId: string;
  request: PresentationRequest;
  identity: { wallet: string | null; emailIndex: string | null };
  loggedIn: boolean;
}

interface ConsentState extends ConsentInteraction {
  held: HeldByAccount[];
  evaluation: DcqlEvaluation;
}

async function consentInteraction(deps: PresentationDeps, id: string): Promise<ConsentInteraction> {
  const row = await liveInteraction(deps.interactions, id);
  if (row.kind !== 'consent') throw gone();
  return {
    interactionId: row.id,
    request: JSON.parse(row.params) as PresentationRequest,
    identity: { wallet: row.identity_wallet, emailIndex: row.identity_email_index },
    loggedIn: row.identity_wallet !== null || row.identity_email_index !== null,
  };
}

/** The consent with the person's credentials read and matched; none before they log in. */
async function consentState(deps: PresentationDeps, id: string): Promise<ConsentState> {
  const consent = await consentInteraction(deps, id);
  const accounts = await findAccountsOfIdentity(deps.db, consent.identity);
  const held = await heldCredentials(
    deps,
    accounts.map((a) => a.user_id),
    [...new Set(consent.request.dcqlQuery.credentials.map((query) => query.format))],
  );
  const formats = consent.request.metadata.vp_formats_supported as Record<string, unknown> | undefined;
  const confirming = queriesWithTransactionData(consent.request.transactionData ?? []);
  const accepts = (credential: HeldCredential, holderBinding: boolean, queryId: string) =>
    (!confirming.has(queryId) ||
      (TRANSACTION_DATA_FORMATS.includes(credential.format) && (credential as HeldByAccount).keyBound)) &&
    deps.formats
      .get(credential.format)
      .verifierCanVerify(
        (credential as HeldByAccount).stored,
        formats === undefined ? {} : (formats[credential.format] as Record<string, unknown> | undefined),
        holderBinding,
      );
  const federation = await federationTrustOf(deps, consent.request.dcqlQuery, held);
  const lists = await trustedListTrustOf(deps, consent.request.dcqlQuery, held);
  const trust =
    federation || lists
      ? { federationEntities: federation?.federationEntities ?? (() => []), ...lists }
      : undefined;
  return { ...consent, held, evaluation: evaluateDcql(consent.request.dcqlQuery, held, accepts, trust) };
}

/**
 * For queries with `openid_federation` trusted authorities: each held credential's issuer (an
 * https `iss`, which the formats tie to the signing certificate) resolved through the wallet's own
 * FEDERATION_TRUST_ANCHORS — never through an entity the verifier names. An issuer with no chain,
 * or a federation that cannot be reached, is simply not a member.
 */
async function federationTrustOf(
  deps: PresentationDeps,
  query: PresentationRequest['dcqlQuery'],
  held: HeldCredential[],
): Promise<CredentialTrust | undefined> {
  const resolver = deps.requests.federation;
  const asked = query.credentials.some((c) =>
    c.trusted_authorities?.some((authority) => authority.type === 'openid_federation'),
  );
  if (!resolver || !asked) return undefined;
  const entities = await Promise.all(
    held.map(async (credential) => {
      const issuer = credential.summary.issuer;
      if (!isEntityIdentifier(issuer)) return [];
      try {
        return (await resolver.resolve(issuer)).entities;
      } catch (error) {
        if (error instanceof TrustError) return [];
        throw error;
      }
    }),
  );
  return { federationEntities: (index) => entities[index] ?? [] };
}

/**
 * For queries with `etsi_tl` trusted authorities: the lists of TRUSTED_LISTS (and their member
 * lists) with a granted issuer service that each held credential's x5c chain reaches. Only the
 * wallet's own lists are read, never a URL the verifier names; when the query names only
 * configured lists, only those. A named list that cannot be fetched while the person waits is a
 * 502 (the answer would be wrong, not empty); one that fails its signature or is expired vouches for
 * no one (logged by the reader).
 */
async function trustedListTrustOf(
  deps: PresentationDeps,
  query: PresentationRequest['dcqlQuery'],
  held: HeldByAccount[],
): Promise<Pick<CredentialTrust, 'trustedLists' | 'trustedListKnown'> | undefined> {
  const resolver = deps.requests.trustedLists;
  const asked = new Set(
    query.credentials.flatMap((c) =>
      (c.trusted_authorities ?? []).filter((a) => a.type === 'etsi_tl').flatMap((a) => a.values),
    ),
  );
  if (!resolver || asked.size === 0) return undefined;
  const direct = resolver.sources.filter((source) => asked.has(source.url));
  const read: IssuerServices[] = [];
  for (const source of direct.length === asked.size ? direct : resolver.sources) {
    try {
      read.push(await resolver.issuerServices(source.url));
    } catch (error) {
      if (!(error instanceof TrustError)) throw error;
      // A list the verifier names that cannot be had now; one it may name through (a LoTL of an
      // asked member) leaves that member unknown, which the reason says cannot be checked.
      if (error.code === 'fetch_failed' && asked.has(source.url))
        throw new CofferError(
          'bad_gateway',
          `The trusted list ${source.url} cannot be read now: ${error.message}.`,
        );
    }
  }
  const known = new Set(read.flatMap((r) => r.lists));
  const now = deps.requests.now();
  const lists = held.map((credential) => {
    const chain = issuerChainOf(deps, credential);
    if (!chain) return [];
    const [leaf, ...intermediates] = chain;
    // A credential reached through a member list is under that list and the LoTL that points to it.
    return read.flatMap(({ services, lists: under }) =>
      services
        .filter((service) => serviceVouchingFor([service], leaf!, intermediates, now))
        .flatMap((service) => [service.listUrl, under[0]!]),
    );
  });
  return { trustedLists: (index) => lists[index] ?? [], trustedListKnown: (url) => known.has(url) };
}

/** A held credential's issuer chain, parsed; null when it has none (or it cannot be read). */
function issuerChainOf(deps: PresentationDeps, credential: HeldByAccount): X509Certificate[] | null {
  try {
    const ders = deps.formats.get(credential.format).issuerChain?.(credential.stored);
    return ders?.length ? ders.map((der) => parseCertificate(der)) : null;
  } catch {
    return null;
  }
}

/**
 * Who asks and how the wallet knows (DESIGN.md, Hosted wallet): `prefix` and `verified` always,
 * and whichever of certificate, attestation issuer, DID and federation identified the verifier.
 */
function describeVerifier(verifier: PresentationRequest['verifier']) {
  const certificate = verifier.certificate;
  return {
    client_id: verifier.clientId,
    prefix: verifier.kind,
    /** The same as prefix; kept for clients written before prefix. */
    kind: verifier.kind,
    name: verifier.name,
    verified: verifier.verified ?? (verifier.registeredClientId !== null || certificate?.trusted === true),
    registered: verifier.registeredClientId !== null,
    certificate: certificate && {
      subject: certificate.subject,
      issuer: certificate.issuer,
      fingerprint: certificate.fingerprint,
      not_after: certificate.notAfter,
      trusted: certificate.trusted,
      anchor: certificate.anchor ?? null,
    },
    ...(verifier.attestationIssuer ? { attestation_issuer: verifier.attestationIssuer } : {}),
    ...(verifier.did ? { did: verifier.did } : {}),
    ...(verifier.federation
      ? { federation: { entity_id: verifier.federation.entityId, trust_anchor: verifier.federation.anchor } }
      : {}),
  };
}

/** What the consent page and headless clients show: who asks, for which claims, from which credentials. */
export async function describeConsent(deps: PresentationDeps, id: string) {
  const { request, held, evaluation, loggedIn } = await consentState(deps, id);
  let choice = chooseCredentials(evaluation);
  if (
    choice.ok &&
    !bindTransactionData(
      request.transactionData ?? [],
      choice.chosen.map((c) => c.queryId),
    )
  ) {
    choice = { ok: false, reason: 'no credential you hold can confirm the transaction' };
  }
  return {
    verifier: describeVerifier(request.verifier),
    response_mode: request.responseMode,
    transaction_data: (request.transactionData ?? []).map((item) => ({
      type: item.type,
      credential_ids: item.credentialIds,
      fields: item.fields,
    })),
    requests: evaluation.queries.map((query) => {
      const dcql = request.dcqlQuery.credentials.find((c) => c.id === query.queryId)!;
      return {
        id: query.queryId,
        format: dcql.format,
        multiple: query.multiple,
        claims: ((dcql.claims ?? []) as Array<{ path: unknown[] }>).map((claim) => claim.path),
        candidates: loggedIn
          ? query.candidates.map((candidate) => {
              const { summary, format, did, issuerDisplaySealed } = held[candidate.credentialIndex]!;
              const certificate = summary.issuerCertificate;
              const display = openIssuerDisplay(deps.cipher, {
                did,
                credential_id: held[candidate.credentialIndex]!.id,
                issuer_display_sealed: issuerDisplaySealed,
              });
              const named = namesInCredential(format, summary.claims);
              return {
                credential_id: candidate.credentialId,
                format,
                issuer: summary.issuer,
                /** The issuer and type as a person reads them (formats/display-names.ts). */
                issuer_name: issuerName({
                  id: summary.issuer,
                  displayName: display?.name ?? named.issuer,
                  certificateSubject: certificate?.subject,
                }).label,
                type_name: credentialTypeName({
                  type: summary.type,
                  displayName: display?.credential_name ?? named.credential,
                }),
                issuer_certificate: certificate && {
                  subject: certificate.subject,
                  issuer: certificate.issuer,
                  fingerprint: certificate.fingerprint,
                  not_after: certificate.notAfter,
                  trusted: certificate.trusted,
                },
                types: typesOf(summary.type),
                valid_until: summary.validUntil,
                discloses_everything: deps.formats.get(format).disclosesEverything,
                claims: candidate.claims.map((claim) => ({
                  path: claim.path,
                  values: claim.values,
                  // mdoc elements only (B.2.4): the verifier says it will keep this one.
                  ...(claim.intentToRetain ? { intent_to_retain: true } : {}),
                })),
              };
            })
          : [],
      };
    }),
    credential_sets: evaluation.credentialSets,
    satisfiable: loggedIn && choice.ok,
    ...(loggedIn && !choice.ok ? { unsatisfiable_reason: choice.reason } : {}),
  };
}

export interface ConsentDecision {
  decision: 'approve' | 'decline';
  selections?: Selections | undefined;
}

/** The holder keys of the accounts whose credentials are presented. */
async function holderKeys(deps: PresentationDeps, userIds: number[]) {
  const rows = await findHolderKeys(deps.db, [...new Set(userIds)]);
  return new Map(
    rows.map((row) => [
      row.user_id,
      {
        did: row.did,
        privateJwk: JSON.parse(
          deps.cipher.decrypt(row.holder_key_sealed, holderKeyContext(row.did)),
        ) as JsonWebKey,
      },
    ]),
  );
}

/**
 * A received credential is presented from an unused copy where there is one, signed with that
 * copy's own holder key, so that two verifiers cannot link the person by the same key.
 */
async function copyToPresent(deps: PresentationDeps, held: HeldByAccount) {
  const copy = await takeCopy(deps.db, held.credentialPk, new Date().toISOString());
  if (!copy) return undefined;
  return {
    stored: await deps.store.getEncrypted(copy.cid, credentialContext(held.did)),
    holder: {
      did: held.did,
      privateJwk: JSON.parse(
        deps.cipher.decrypt(copy.holder_key_sealed, copyKeyContext(held.did, copy.cid)),
      ) as JsonWebKey,
    },
  };
}

/** The verifier key and algorithms a direct_post.jwt answer is encrypted with (chosen once per answer). */
const encryptionOf = (request: PresentationRequest) =>
  request.responseMode === 'direct_post.jwt'
    ? chooseEncryption(request.metadata)
    : Promise.resolve(undefined);

/**
 * What binds the presentations to this request (§14.1.2, B.2.6.1): the client_id with its prefix,
 * the nonce, the response or redirect URI, and the thumbprint of the key the response is
 * encrypted to.
 */
async function audienceOf(
  request: PresentationRequest,
  encryption: EncryptionChoice | undefined,
): Promise<Audience> {
  return {
    clientId: request.verifier.clientId,
    nonce: request.nonce,
    responseUri: request.target,
    encryptionJwkThumbprint: encryption ? Buffer.from(jwkThumbprint(encryption.jwk), 'base64url') : null,
  };
}

/**
 * On approval: for each chosen credential a presentation of exactly the requested claims in its
 * format (Appendix B), bound to this verifier and nonce; the vp_token keyed by DCQL query id.
 */
async function approvedVpToken(
  deps: PresentationDeps,
  state: ConsentState,
  selections: Selections | undefined,
  encryption: EncryptionChoice | undefined,
): Promise<{ vpToken: Record<string, unknown[]>; shared: SharedCredential[] }> {
  if (!state.loggedIn)
    throw new CofferError(
      'invalid_request',
      'Log in first: the consent needs to know whose credentials to share.',
    );
  const unknown = Object.keys(selections ?? {}).find(
    (queryId) => !state.evaluation.queries.some((q) => q.queryId === queryId),
  );
  if (unknown) throw new CofferError('invalid_request', `The request has no credential query ${unknown}.`);
  const choice = chooseCredentials(state.evaluation, selections);
  if (!choice.ok)
    throw new CofferError('invalid_request', `Nothing can be shared: ${choice.reason}; decline instead.`);
  const keys = await holderKeys(
    deps,
    choice.chosen.flatMap((c) =>
      c.candidates.map((candidate) => state.held[candidate.credentialIndex]!.userId),
    ),
  );
  const audience = await audienceOf(state.request, encryption);
  const transactionData = state.request.transactionData ?? [];
  const confirmed = bindTransactionData(
    transactionData,
    choice.chosen.map((c) => c.queryId),
  );
  if (!confirmed) {
    throw new CofferError(
      'invalid_request',
      'The chosen credentials cannot confirm the transaction: choose one the transaction names, or decline.',
    );
  }
  const items = choice.chosen.flatMap(({ queryId, holderBinding, candidates }) =>
    candidates.map((candidate) => ({
      queryId,
      holderBinding,
      held: state.held[candidate.credentialIndex]!,
      candidate,
    })),
  );
  const presentations = await Promise.all(
    items.map(async ({ queryId, holderBinding, held, candidate }) => {
      const copy = held.received ? await copyToPresent(deps, held) : undefined;
      return deps.formats.get(held.format).present({
        stored: copy?.stored ?? held.stored,
        prepared: copy ? undefined : await readPrepared(deps.store, held.did, held.preparedCid),
        disclosed: candidate.claims.flatMap((claim) => claim.pointers),
        holder: holderBinding || held.keyBound ? (copy?.holder ?? keys.get(held.userId)!) : null,
        audience,
        ...(confirmed.has(queryId)
          ? { keyBindingClaims: transactionDataClaims(confirmed.get(queryId)!) }
          : {}),
      });
    }),
  );
  const vpToken: Record<string, unknown[]> = {};
  items.forEach((item, i) => {
    vpToken[item.queryId] ??= [];
    vpToken[item.queryId]!.push(presentations[i]);
  });
  const shared = items.map(({ held, candidate }) => ({
    account: { user_id: held.userId, did: held.did },
    credential: { id: held.id, format: held.format, types: typesOf(held.summary.type) },
    claims: candidate.claims.map((claim) => claim.path as unknown[]),
  }));
  return { vpToken, shared };
}

interface SharedCredential {
  account: { user_id: number; did: string };
  credential: CredentialRef;
  claims: unknown[][];
}

/** The person's history keeps each presentation, delivered or not (wallet/wallet-history.ts). */
async function recordPresentations(
  deps: PresentationDeps,
  request: PresentationRequest,
  shared: SharedCredential[],
  outcome: { delivered: true } | { delivered: false; reason: string },
): Promise<void> {
  const at = new Date().toISOString();
  const verifier = {
    name: request.verifier.name,
    client_id: request.verifier.clientId,
    certificate_subject: request.verifier.certificate?.subject ?? null,
  };
  await deps.recordHistory(
    shared.map(({ account, credential, claims }) => ({
      account,
      event: {
        kind: 'presentation',
        at,
        credential,
        verifier,
        claims,
        outcome: outcome.delivered ? 'delivered' : 'failed',
        ...(outcome.delivered ? {} : { reason: outcome.reason }),
      },
    })),
  );
}

/**
 * The person who answered: the account whose credential went first, else (a decline) the first
 * account of the logged-in identity, else a wallet no account names (declined before logging in).
 */
async function consentActor(
  deps: PresentationDeps,
  state: ConsentInteraction,
  shared: SharedCredential[],
): Promise<AuditActor> {
  const first = shared[0]?.account.user_id;
  if (first !== undefined) return `person:${first}`;
  if (!state.loggedIn) return 'wallet';
  const [account] = await findAccountsOfIdentity(deps.db, state.identity);
  return account ? `person:${account.user_id}` : 'wallet';
}

/**
 * Consent belongs to the person's wallet, not to a tenant (DESIGN.md, The person's wallet): the
 * event is the service's (no tenant), so no tenant's trail learns where its users present
 * credentials — an issuer must not follow its credentials to their verifiers.
 */
function consentEvent(
  state: ConsentInteraction,
  decision: ConsentDecision['decision'],
  shared: SharedCredential[],
  actor: AuditActor,
): AuditEvent {
  return {
    clientId: null,
    actor,
    type: 'wallet.consent',
    targets: {
      interaction_id: state.interactionId,
      verifier: state.request.verifier.clientId,
      decision,
      credentials: shared.length,
    },
  };
}

/**
 * The person's answer (POST /interaction/{id}/consent): the presentation on approval,
 * access_denied on decline (which reads none of the person's credentials). Either goes back by
 * the request's response mode, once.
 */
export async function decideConsent(
  deps: PresentationDeps,
  id: string,
  body: ConsentDecision,
): Promise<{ redirectTo: string | null }> {
  let state: ConsentInteraction;
  let parameters: ResponseParameters;
  let encryption: EncryptionChoice | undefined;
  let shared: SharedCredential[] = [];
  if (body.decision === 'decline') {
    state = await consentInteraction(deps, id);
    parameters = {
      error: 'access_denied',
      error_description: 'The person declined to share the requested credentials.',
    };
  } else {
    const matched = await consentState(deps, id);
    state = matched;
    encryption = await encryptionOf(matched.request);
    const approved = await approvedVpToken(deps, matched, body.selections, encryption);
    parameters = { vp_token: approved.vpToken };
    shared = approved.shared;
  }
  const { request } = state;
  const actor = await consentActor(deps, state, shared);
  const finished = await deps.db.transaction().execute(async (tx) => {
    if (!(await finishInteraction(tx, state.interactionId, {}))) return false;
    await deps.audit?.record(tx, consentEvent(state, body.decision, shared, actor));
    return true;
  });
  if (!finished) throw gone();
  try {
    const delivered = await deliverResponse(request, parameters, deps.outbound, encryption);
    await recordPresentations(deps, request, shared, { delivered: true });
    if (shared.length > 0)
      await deps.delivered?.(
        request.target,
        shared.map((s) => s.account.user_id),
      );
    return delivered;
  } catch (error) {
    if (error instanceof DeliveryError) {
      await recordPresentations(deps, request, shared, { delivered: false, reason: error.message });
      throw new CofferError(
        'bad_gateway',
        `The answer could not be given to ${request.verifier.name}: ${error.message}.`,
      );
    }
    throw error;
  }
}
