import { createHash, type JsonWebKey, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { WalletProvider } from '../config/wallet-provider.ts';
import type { Database } from '../db/schema.ts';
import { rememberNonce } from '../db/seen-once.ts';
import { CofferError } from '../errors.ts';
import type { OutboundClient } from '../http/outbound.ts';
import {
  finishInteraction,
  type InteractionRow,
  updateInteraction,
} from '../interaction/interaction-repository.ts';
import {
  gone,
  type InteractionDeps,
  liveInteraction,
  startInteraction,
} from '../interaction/interaction-service.ts';
import { identityOfSession } from '../interaction/session-identity.ts';
import type { SessionRow } from '../interaction/session-repository.ts';
import { findAccountsOfIdentity, findHolderKeys, type UserIdentity } from '../users/user-repository.ts';
import { holderKeyContext } from '../users/user-service.ts';
import { planProofs, requestCredential } from './credential-request.ts';
import { scheduleDeferredIssuance } from './deferred-issuances.ts';
import {
  configurationClaimNames,
  configurationDisplayName,
  offerRefused,
  type ResolvedOffer,
  resolveOffer,
  resolveWalletIssuance,
} from './issuance-offer.ts';
import {
  authorizationCodeToken,
  authorizationServerOf,
  type GrantContext,
  newInstanceKey,
  preAuthorizedToken,
  startAuthorization,
} from './issuance-tokens.ts';
import {
  type IssuanceKey,
  type IssuanceToken,
  issuanceClient,
  issuanceKeyOf,
  privateJwkOf,
} from './issuer-client.ts';
import { notificationRecord, sendNotification } from './notifications.ts';
import {
  type ReceivedCredential,
  type ReceivedStoreDeps,
  storeReceivedCredential,
} from './received-credentials.ts';
import { type MetadataSigner, signedMetadataVerifier } from './signed-metadata.ts';
import { authenticationFor, keyAttestation, walletAttestation } from './wallet-attestation.ts';

export interface IssuanceDeps extends ReceivedStoreDeps {
  outbound: OutboundClient;
  interactions: InteractionDeps;
  /** PUBLIC_URL (the callback's base and the wallet provider's identifier) and OID4VCI_CLIENT_ID. */
  config: { publicUrl: string; clientId: string; deferredTimeoutSeconds: number };
  /** WALLET_PROVIDER_KEY and WALLET_PROVIDER_CHAIN, when set: Wallet Attestations and key attestations. */
  walletProvider: WalletProvider | null;
  log: { warn(object: object, message: string): void };
}

/** An authorization request under way: what the callback needs, its secrets sealed. */
interface PendingAuthorization {
  stateHash: string;
  codeVerifierSealed: string;
  /** The issuance's instance key (DPoP, Wallet Attestation `cnf`). */
  instanceKeySealed: string;
  dpop: boolean;
  dpopNonce: string | null;
  accountDid: string;
}

interface IssuanceParams extends ResolvedOffer {
  authorization?: PendingAuthorization;
}

/** An offer is taken once; it is remembered for 30 days (longer than any offer lives). */
const OFFER_MEMORY_SECONDS = 30 * 24 * 3600;

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

export const callbackUrl = (deps: IssuanceDeps) => `${deps.config.publicUrl}/v1/oid4vci/callback`;

/** What the wallet provider signs with, now (PUBLIC_URL names the provider). */
const attestationInput = (deps: IssuanceDeps, provider: WalletProvider) => ({
  provider,
  providerId: deps.config.publicUrl,
  clientId: deps.config.clientId,
  now: deps.now(),
});

function grantContext(deps: IssuanceDeps, params: IssuanceParams): GrantContext {
  const provider = deps.walletProvider;
  return {
    outbound: deps.outbound,
    clientId: deps.config.clientId,
    offer: params.offer,
    metadata: params.metadata,
    attest: provider
      ? (instanceJwk) => walletAttestation(attestationInput(deps, provider), instanceJwk)
      : undefined,
  };
}

/** A client that asks for signed metadata, and who signed what it read (signed-metadata.ts). */
function metadataClient(deps: IssuanceDeps) {
  let signer: MetadataSigner | null = null;
  const verifyMetadata = signedMetadataVerifier(deps.issuerTrustAnchors, deps.now, (seen) => {
    signer = seen;
  });
  return {
    client: issuanceClient(deps.outbound, deps.config.clientId, [], { verifyJwt: verifyMetadata }),
    signer: () => signer,
  };
}

/**
 * GET /v1/oid4vci/start: wallet-initiated issuance from an issuer's address, opening the same
 * interaction as an offer, in which the person chooses the credentials (when several) and the
 * issuer's authorization page follows.
 */
export async function startWalletIssuance(
  deps: IssuanceDeps,
  query: { credential_issuer: string; credential_configuration_id?: string | undefined },
  session: SessionRow | undefined,
): Promise<string> {
  const metadataReader = metadataClient(deps);
  const params: IssuanceParams = await resolveWalletIssuance(
    metadataReader.client,
    query,
    metadataReader.signer,
  );
  return startInteraction(deps.interactions, {
    kind: 'issuance',
    clientId: null,
    params: JSON.stringify(params),
    identity: await identityOfSession(deps, session),
  });
}

/**
 * GET /v1/oid4vci/offer: resolves and checks the offer, takes it once, and starts the
 * interaction in which the person logs in (unless a session says who they are) and decides.
 */
export async function startIssuance(
  deps: IssuanceDeps,
  query: { credential_offer?: string | undefined; credential_offer_uri?: string | undefined },
  session: SessionRow | undefined,
): Promise<string> {
  const metadataReader = metadataClient(deps);
  const resolved = await resolveOffer(metadataReader.client, query, metadataReader.signer);
  const nowSeconds = Math.floor(deps.now().getTime() / 1000);
  const fingerprint = sha256(query.credential_offer_uri ?? JSON.stringify(resolved.offer));
  if (
    !(await rememberNonce(
      deps.db,
      `oid4vci:${resolved.issuer.identifier}`,
      fingerprint,
      nowSeconds,
      OFFER_MEMORY_SECONDS,
    ))
  ) {
    throw offerRefused('it was opened before; ask the issuer for a new offer');
  }
  const params: IssuanceParams = resolved;
  return startInteraction(deps.interactions, {
    kind: 'issuance',
    clientId: null,
    params: JSON.stringify(params),
    identity: await identityOfSession(deps, session),
  });
}

interface IssuanceState {
  row: InteractionRow;
  params: IssuanceParams;
  loggedIn: boolean;
}

async function issuanceState(deps: IssuanceDeps, id: string): Promise<IssuanceState> {
  const row = await liveInteraction(deps.interactions, id);
  if (row.kind !== 'issuance') throw gone();
  return {
    row,
    params: JSON.parse(row.params) as IssuanceParams,
    loggedIn: row.identity_wallet !== null || row.identity_email_index !== null,
  };
}

const accountsOf = (db: Kysely<Database>, row: InteractionRow) =>
  findAccountsOfIdentity(db, { wallet: row.identity_wallet, emailIndex: row.identity_email_index });

/** The interaction JSON's `issuance` object, and what the page shows. */
export async function describeIssuance(deps: IssuanceDeps, id: string) {
  const { row, params, loggedIn } = await issuanceState(deps, id);
  const accounts = loggedIn ? await accountsOf(deps.db, row) : [];
  return {
    issuer: params.issuer,
    credentials: params.configurations,
    grant: params.grant,
    tx_code: params.txCode,
    accounts: await Promise.all(
      accounts.map(async (account) => ({
        account: account.did,
        tenant: (await findClient(deps.db, account.tenant_id))?.name ?? `tenant ${account.tenant_id}`,
      })),
    ),
    awaiting_authorization: params.authorization !== undefined,
    /** Started from the wallet: the person chooses among `credentials` (credential_configuration_ids). */
    wallet_initiated: params.walletInitiated === true,
  };
}

export type IssuanceDescription = Awaited<ReturnType<typeof describeIssuance>>;

export interface IssuanceDecision {
  decision: 'approve' | 'decline';
  tx_code?: string | undefined;
  account?: string | undefined;
  /** Which of the listed credentials, in an issuance the wallet started. */
  credential_configuration_ids?: string[] | undefined;
}

export interface IssuanceResult {
  /** The issuer's authorization page, for the authorization code grant. */
  redirectTo?: string;
  received: ReceivedCredential[];
  /** Credentials the issuer will deliver later (deferred issuance). */
  pending: number;
}

/** What a headless client reads after an issuance (POST consent, or the callback as JSON). */
export const resultView = (result: IssuanceResult) => ({
  next: 'done',
  received: result.received.map((r) => ({ credential_id: r.credentialId, format: r.format, type: r.type })),
  pending: result.pending,
});

function chooseAccount(accounts: UserIdentity[], chosen: string | undefined): UserIdentity {
  if (accounts.length === 0) {
    throw new CofferError(
      'invalid_request',
      'This identity has no account in any service of this wallet yet, so nothing can receive the credential.',
    );
  }
  if (chosen === undefined) {
    if (accounts.length > 1) {
      throw new CofferError('invalid_request', 'Choose the account that receives the credentials.', {
        details: [{ path: '/body/account', message: 'is required when the identity has several accounts' }],
      });
    }
    return accounts[0]!;
  }
  const account = accounts.find((a) => a.did === chosen);
  if (!account) {
    throw new CofferError('invalid_request', 'That account is not one of yours.', {
      details: [{ path: '/body/account', message: 'must be one of the listed accounts' }],
    });
  }
  return account;
}

/** tx_code as the offer describes it (§4.1.1): present, of its length, digits when numeric. */
function checkTxCode(params: IssuanceParams, txCode: string | undefined): string | undefined {
  const asked = params.txCode;
  if (!asked) return undefined;
  const problem =
    txCode === undefined || txCode === ''
      ? 'is required: the issuer sent it to you separately'
      : asked.length !== null && txCode.length !== asked.length
        ? `must have ${asked.length} characters`
        : asked.input_mode === 'numeric' && !/^\d+$/.test(txCode)
          ? 'must be digits only'
          : undefined;
  if (problem) {
    throw new CofferError('invalid_request', `The transaction code ${problem}.`, {
      details: [{ path: '/body/tx_code', message: problem }],
    });
  }
  return txCode;
}

/**
 * In an issuance the person started, the credentials they chose (every one listed when only
 * one is); an offer's credentials come together, as the issuer offered them.
 */
function chooseConfigurations(params: IssuanceParams, chosen: string[] | undefined): IssuanceParams {
  const path = '/body/credential_configuration_ids';
  if (!params.walletInitiated) {
    if (chosen === undefined) return params;
    throw new CofferError('invalid_request', "An offer's credentials come as the issuer offered them.", {
      details: [{ path, message: 'is only for an issuance started from the wallet' }],
    });
  }
  if (chosen === undefined) {
    if (params.configurations.length === 1) return params;
    throw new CofferError('invalid_request', 'Choose the credentials to add.', {
      details: [{ path, message: 'is required when the issuer has several credentials' }],
    });
  }
  const unknown = chosen.find((id) => !params.configurations.some((c) => c.id === id));
  if (unknown !== undefined) {
    throw new CofferError('invalid_request', `The issuer listed no credential ${unknown.slice(0, 100)}.`, {
      details: [{ path, message: 'must name listed credentials' }],
    });
  }
  const ids = [...new Set(chosen)];
  return {
    ...params,
    offer: { ...params.offer, credential_configuration_ids: ids },
    configurations: params.configurations.filter((c) => ids.includes(c.id)),
  };
}

/** The account's hosted key as an issuance key, named by its did:key URL (W3C formats' proofs). */
async function accountKeyOf(deps: IssuanceDeps, account: UserIdentity): Promise<IssuanceKey> {
  const [row] = await findHolderKeys(deps.db, [account.user_id]);
  if (!row) throw gone();
  const privateJwk = JSON.parse(deps.cipher.decrypt(row.holder_key_sealed, holderKeyContext(row.did)));
  return issuanceKeyOf(privateJwk, `${row.did}#${row.did.slice('did:key:'.length)}`);
}

/**
 * With a token in hand: each offered credential requested, checked and stored for the account
 * (or scheduled, when deferred), and the issuer told the outcome. A credential the wallet
 * refuses is reported as `credential_failure` and stores nothing.
 */
async function receiveOffered(
  deps: IssuanceDeps,
  params: IssuanceParams,
  account: UserIdentity,
  token: IssuanceToken,
): Promise<IssuanceResult> {
  const result: IssuanceResult = { received: [], pending: 0 };
  const provider = deps.walletProvider;
  const context = {
    outbound: deps.outbound,
    clientId: deps.config.clientId,
    metadata: params.metadata,
    token,
    accountKey: await accountKeyOf(deps, account),
    attestKeys: provider
      ? (keys: JsonWebKey[], nonce: string | undefined) =>
          keyAttestation(attestationInput(deps, provider), keys, nonce)
      : undefined,
    now: deps.now,
  };
  for (const configuration of params.configurations) {
    const outcome = await requestCredential(context, configuration.id, configuration.format);
    if (outcome.kind === 'deferred') {
      await scheduleDeferredIssuance(deps, account, {
        metadata: params.metadata,
        configurationId: configuration.id,
        format: configuration.format,
        transactionId: outcome.transactionId,
        intervalSeconds: outcome.intervalSeconds,
        token,
        keys: outcome.keys,
        encryption: outcome.encryption,
      });
      result.pending += 1;
      continue;
    }
    const notify = (event: 'credential_accepted' | 'credential_failure', description?: string) =>
      outcome.notificationId
        ? sendNotification(deps, params.metadata, token, outcome.notificationId, event, description)
        : Promise.resolve();
    try {
      result.received.push(
        await storeReceivedCredential(deps, account, {
          format: configuration.format,
          credentialIssuer: params.issuer.identifier,
          issuerDisplay: {
            name: params.issuer.name,
            logo: params.issuer.logo,
            credential_name: configurationDisplayName(params.metadata, configuration.id),
            claim_names: configurationClaimNames(params.metadata, configuration.id),
          },
          copies: outcome.copies,
          notification: notificationRecord(params, token, outcome.notificationId),
        }),
      );
    } catch (error) {
      await notify('credential_failure', error instanceof Error ? error.message : undefined);
      throw error;
    }
    await notify('credential_accepted');
  }
  return result;
}

/**
 * The person's answer (POST /interaction/{id}/consent on an issuance). Decline ends it without
 * a word to the issuer. Approve, with a pre-authorized code: token, credentials, storage, here
 * and now; with the authorization grant: the issuer's authorization page comes first.
 */
export async function decideIssuance(
  deps: IssuanceDeps,
  id: string,
  body: IssuanceDecision,
): Promise<IssuanceResult> {
  const { row, params: listed, loggedIn } = await issuanceState(deps, id);
  if (body.decision === 'decline') {
    if (!(await finishInteraction(deps.db, row.id, {}))) throw gone();
    return { received: [], pending: 0 };
  }
  if (!loggedIn) {
    throw new CofferError(
      'invalid_request',
      'Log in first: the wallet needs to know whose credentials these are.',
    );
  }
  if (listed.authorization) {
    throw new CofferError('invalid_request', "This issuance is waiting for the issuer's authorization page.");
  }
  const params = chooseConfigurations(listed, body.credential_configuration_ids);
  // What the wallet cannot do (authenticate as the server demands, make the key attestations
  // the issuer requires) is refused before the person is sent to the issuer, not after.
  authenticationFor(authorizationServerOf(params.metadata), deps.walletProvider !== null);
  for (const c of params.configurations)
    planProofs(params.metadata, c.id, c.format, deps.walletProvider !== null);
  const account = chooseAccount(await accountsOf(deps.db, row), body.account);
  const grant = grantContext(deps, params);
  if (params.grant === 'pre-authorized_code') {
    // The interaction ends once the issuer accepted the code: a mistyped tx_code can be corrected.
    const token = await preAuthorizedToken(grant, checkTxCode(params, body.tx_code));
    if (!(await finishInteraction(deps.db, row.id, { user_id: account.user_id }))) throw gone();
    return receiveOffered(deps, params, account, token);
  }
  const secret = randomBytes(24).toString('base64url');
  const instanceKey = newInstanceKey();
  const started = await startAuthorization({
    ...grant,
    state: `${row.id}.${secret}`,
    redirectUri: callbackUrl(deps),
    instanceKey,
  });
  const authorization: PendingAuthorization = {
    stateHash: sha256(secret),
    codeVerifierSealed: deps.cipher.encrypt(started.codeVerifier, `interactions/${row.id}/pkce`),
    instanceKeySealed: deps.cipher.encrypt(
      JSON.stringify(privateJwkOf(instanceKey)),
      `interactions/${row.id}/instance-key`,
    ),
    dpop: started.dpop,
    dpopNonce: started.dpopNonce ?? null,
    accountDid: account.did,
  };
  await updateInteraction(deps.db, row.id, {
    params: JSON.stringify({ ...params, authorization }),
    user_id: account.user_id,
  });
  return { redirectTo: started.url, received: [], pending: 0 };
}

export interface CallbackQuery {
  state?: string | undefined;
  code?: string | undefined;
  error?: string | undefined;
  error_description?: string | undefined;
  iss?: string | undefined;
}

const foreignCallback = () =>
  new CofferError(
    'forbidden',
    'This answer from an issuer does not belong to an issuance started in this browser; start again from the offer.',
  );

/**
 * GET /v1/oid4vci/callback (RFC 6749 §4.1.2, RFC 9207): the state must name a live issuance of
 * this browser's session; then the code is exchanged and the credentials received.
 */
export async function finishAuthorization(
  deps: IssuanceDeps,
  query: CallbackQuery,
  session: SessionRow | undefined,
): Promise<IssuanceResult> {
  const [interactionId, secret] = (query.state ?? '').split('.');
  if (!interactionId || !secret || !session) throw foreignCallback();
  let state: IssuanceState;
  try {
    state = await issuanceState(deps, interactionId);
  } catch {
    throw foreignCallback();
  }
  const { row, params } = state;
  const pending = params.authorization;
  if (!pending || pending.stateHash !== sha256(secret)) throw foreignCallback();
  const accounts = await accountsOf(deps.db, row);
  const account = accounts.find((a) => a.did === pending.accountDid);
  if (!account || !accounts.some((a) => a.user_id === session.user_id)) throw foreignCallback();
  const server = params.metadata.authorizationServers[0]!;
  if (
    query.iss !== undefined
      ? query.iss !== server.issuer
      : server.authorization_response_iss_parameter_supported === true
  ) {
    throw offerRefused('the answer does not come from the authorization server the request went to (iss)');
  }
  if (!(await finishInteraction(deps.db, row.id, {}))) throw gone();
  if (query.error !== undefined || query.code === undefined) {
    throw new CofferError(
      'invalid_request',
      `The issuer did not authorize the issuance: ${(query.error_description ?? query.error ?? 'no code was returned').slice(0, 300)}.`,
    );
  }
  const instanceKey = issuanceKeyOf(
    JSON.parse(deps.cipher.decrypt(pending.instanceKeySealed, `interactions/${row.id}/instance-key`)),
  );
  const token = await authorizationCodeToken(
    {
      ...grantContext(deps, params),
      code: query.code,
      codeVerifier: deps.cipher.decrypt(pending.codeVerifierSealed, `interactions/${row.id}/pkce`),
      redirectUri: callbackUrl(deps),
    },
    instanceKey,
    { dpop: pending.dpop, nonce: pending.dpopNonce ?? undefined },
  );
  return receiveOffered(deps, params, account, token);
}
