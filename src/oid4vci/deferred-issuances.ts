import type { JsonWebKey } from 'node:crypto';
import { type IssuerMetadataResult, Openid4vciRetrieveCredentialsError } from '@openid4vc/openid4vci';
import type { Kysely } from 'kysely';
import type { Database, DeferredIssuancesTable } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { FormatId } from '../formats/credential-format.ts';
import { runPeriodically } from '../periodic.ts';
import { findUserById, type UserIdentity } from '../users/user-repository.ts';
import { encryptedCredentialCall, type ResponseEncryption } from './credential-encryption.ts';
import { copiesOf } from './credential-request.ts';
import { configurationClaimNames, configurationDisplayName, issuerDisplayOf } from './issuance-offer.ts';
import {
  dpopOptions,
  type IssuanceKey,
  type IssuanceToken,
  issuanceClient,
  issuanceKeyOf,
  privateJwkOf,
  rememberDpopNonce,
} from './issuer-client.ts';
import { type NotificationDeps, notificationRecord, sendNotification } from './notifications.ts';
import { type ReceivedStoreDeps, storeReceivedCredential } from './received-credentials.ts';

/**
 * Deferred issuance (§9): the transaction waits in the database, so that polling survives a
 * restart and any instance may take it. Each poll honours the issuer's `interval`; after
 * DEFERRED_ISSUANCE_TIMEOUT the wallet gives up and the issuance is marked failed, which the
 * person sees (GET /v1/oid4vci/issuances).
 */

export interface DeferredDeps extends ReceivedStoreDeps, NotificationDeps {
  config: NotificationDeps['config'] & { deferredTimeoutSeconds: number };
}

interface DeferredState {
  metadata: IssuerMetadataResult;
  format: FormatId;
  transactionId: string;
  accessToken: string;
  dpop: { privateJwk: JsonWebKey; nonce: string | null } | null;
  keys: Array<{ privateJwk: JsonWebKey; didUrl: string | null }>;
  /** The response key, when the issuer requires encrypted answers. */
  encryption?: ResponseEncryption | null;
}

type DeferredRow = Pick<
  DeferredIssuancesTable,
  | 'user_id'
  | 'credential_issuer'
  | 'configuration_id'
  | 'created_at'
  | 'next_poll_at'
  | 'give_up_at'
  | 'state_sealed'
> & { deferred_pk: number };

export const stateContext = (row: Pick<DeferredRow, 'user_id' | 'configuration_id' | 'created_at'>) =>
  `deferred-issuances/${row.user_id}/${row.configuration_id}/${row.created_at}`;

/** Polls are never closer than a second, whatever interval an issuer asks for. */
const MIN_INTERVAL_SECONDS = 1;
/** A network failure is retried after this long, doubling up to five minutes. */
const RETRY_SECONDS = 30;
const later = (from: Date, seconds: number) =>
  new Date(from.getTime() + Math.max(MIN_INTERVAL_SECONDS, seconds) * 1000).toISOString();

export async function scheduleDeferredIssuance(
  deps: DeferredDeps & { now: () => Date },
  account: UserIdentity,
  input: {
    metadata: IssuerMetadataResult;
    configurationId: string;
    format: FormatId;
    transactionId: string;
    intervalSeconds: number;
    token: IssuanceToken;
    keys: IssuanceKey[];
    encryption: ResponseEncryption | null;
  },
): Promise<void> {
  const at = deps.now();
  const row = {
    user_id: account.user_id,
    credential_issuer: input.metadata.credentialIssuer.credential_issuer,
    configuration_id: input.configurationId,
    created_at: at.toISOString(),
  };
  const state: DeferredState = {
    metadata: input.metadata,
    format: input.format,
    transactionId: input.transactionId,
    accessToken: input.token.accessToken,
    dpop: input.token.dpop
      ? { privateJwk: privateJwkOf(input.token.dpop.key), nonce: input.token.dpop.nonce ?? null }
      : null,
    keys: input.keys.map((key) => ({ privateJwk: privateJwkOf(key), didUrl: key.didUrl ?? null })),
    encryption: input.encryption,
  };
  await deps.db
    .insertInto('deferred_issuances')
    .values({
      ...row,
      state_sealed: deps.cipher.encrypt(JSON.stringify(state), stateContext(row)),
      status: 'pending',
      failure: null,
      next_poll_at: later(at, input.intervalSeconds),
      give_up_at: new Date(at.getTime() + deps.config.deferredTimeoutSeconds * 1000).toISOString(),
    })
    .execute();
}

async function settle(
  db: Kysely<Database>,
  row: DeferredRow,
  changes: {
    status: 'pending' | 'failed' | 'done';
    failure?: string;
    next_poll_at?: string;
    state_sealed?: string;
  },
) {
  await db
    .updateTable('deferred_issuances')
    .set(changes)
    .where('deferred_pk', '=', row.deferred_pk)
    .execute();
}

/** Takes a due row for this instance: false when another instance took it first. */
async function claim(deps: DeferredDeps & { now: () => Date }, row: DeferredRow): Promise<boolean> {
  const result = await deps.db
    .updateTable('deferred_issuances')
    .set({ next_poll_at: later(deps.now(), 120) })
    .where('deferred_pk', '=', row.deferred_pk)
    .where('status', '=', 'pending')
    .where('next_poll_at', '=', row.next_poll_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

interface PollAnswer {
  credentials?: unknown[];
  notificationId?: string | null;
  /** Still pending: poll again after this many seconds. */
  retryAfter?: number;
  /** The issuer refused for good. */
  refused?: string;
}

/** One call of the Deferred Credential Endpoint, as a plain answer. */
/** A poll when the issuer requires encryption: the same key is sent again (§9.1). */
async function pollEncrypted(
  deps: DeferredDeps,
  state: DeferredState,
  token: IssuanceToken,
  encryption: ResponseEncryption,
): Promise<PollAnswer> {
  let answer: Awaited<ReturnType<typeof encryptedCredentialCall>>;
  try {
    answer = await encryptedCredentialCall(
      { outbound: deps.outbound, clientId: deps.config.clientId, metadata: state.metadata, token },
      state.metadata.credentialIssuer.deferred_credential_endpoint ?? '',
      { transaction_id: state.transactionId },
      encryption,
    );
  } catch (error) {
    if (error instanceof CofferError && error.status === 502) return { retryAfter: RETRY_SECONDS };
    return { refused: error instanceof Error ? error.message : 'the answer could not be read' };
  }
  const { status, body } = answer;
  if (status < 400 && Array.isArray(body['credentials'])) {
    return {
      credentials: body['credentials'] as unknown[],
      notificationId: typeof body['notification_id'] === 'string' ? body['notification_id'] : null,
    };
  }
  const interval = typeof body['interval'] === 'number' ? body['interval'] : RETRY_SECONDS;
  if (status < 400 || body['error'] === 'issuance_pending' || status >= 500) return { retryAfter: interval };
  return {
    refused: `the issuer refused to deliver it (${String(body['error'] ?? `HTTP ${status}`).slice(0, 100)})`,
  };
}

async function pollOnce(deps: DeferredDeps, state: DeferredState, token: IssuanceToken): Promise<PollAnswer> {
  if (state.encryption) return pollEncrypted(deps, state, token, state.encryption);
  const client = issuanceClient(deps.outbound, deps.config.clientId, token.dpop ? [token.dpop.key] : []);
  const dpop = dpopOptions(token);
  try {
    const answer = await client.retrieveDeferredCredentials({
      issuerMetadata: state.metadata,
      accessToken: token.accessToken,
      transactionId: state.transactionId,
      ...(dpop ? { dpop } : {}),
    });
    rememberDpopNonce(token, answer.dpop?.nonce);
    const response = answer.deferredCredentialResponse;
    if (response.credentials)
      return { credentials: response.credentials, notificationId: response.notification_id ?? null };
    return { retryAfter: response.interval ?? RETRY_SECONDS };
  } catch (error) {
    if (!(error instanceof Openid4vciRetrieveCredentialsError)) return { retryAfter: RETRY_SECONDS };
    rememberDpopNonce(token, error.response.dpop?.nonce);
    let body: Record<string, unknown> = {};
    try {
      body = (await error.response.response.clone().json()) as Record<string, unknown>;
    } catch {
      // not JSON: judged by its status below
    }
    // openid4vci 0.4.6 refuses {credentials, notification_id}, which §9.2 allows (DESIGN.md).
    if (error.response.response.status === 200 && Array.isArray(body['credentials'])) {
      return {
        credentials: body['credentials'] as unknown[],
        notificationId: typeof body['notification_id'] === 'string' ? body['notification_id'] : null,
      };
    }
    const interval = typeof body['interval'] === 'number' ? body['interval'] : RETRY_SECONDS;
    if (body['error'] === 'issuance_pending' || error.response.response.status >= 500)
      return { retryAfter: interval };
    const code = typeof body['error'] === 'string' ? body['error'] : `HTTP ${error.response.response.status}`;
    return { refused: `the issuer refused to deliver it (${code.slice(0, 100)})` };
  }
}

async function pollRow(deps: DeferredDeps & { now: () => Date }, row: DeferredRow): Promise<void> {
  if (!(await claim(deps, row))) return;
  const at = deps.now();
  const state = JSON.parse(deps.cipher.decrypt(row.state_sealed, stateContext(row))) as DeferredState;
  const token: IssuanceToken = {
    accessToken: state.accessToken,
    dpop: state.dpop
      ? { key: issuanceKeyOf(state.dpop.privateJwk), nonce: state.dpop.nonce ?? undefined }
      : null,
  };
  const answer = await pollOnce(deps, state, token);
  if (answer.refused) return settle(deps.db, row, { status: 'failed', failure: answer.refused });
  if (!answer.credentials) {
    if (row.give_up_at <= at.toISOString()) {
      return settle(deps.db, row, {
        status: 'failed',
        failure: 'the issuer did not deliver it in time; ask the issuer again',
      });
    }
    // The server's newest DPoP nonce is kept for the next poll.
    const next = state.dpop ? { ...state, dpop: { ...state.dpop, nonce: token.dpop?.nonce ?? null } } : state;
    return settle(deps.db, row, {
      status: 'pending',
      next_poll_at: later(at, answer.retryAfter ?? RETRY_SECONDS),
      state_sealed: deps.cipher.encrypt(JSON.stringify(next), stateContext(row)),
    });
  }
  const account = await findUserById(deps.db, row.user_id);
  if (!account) return settle(deps.db, row, { status: 'failed', failure: 'the account no longer exists' });
  const keys = state.keys.map((k) => issuanceKeyOf(k.privateJwk, k.didUrl ?? undefined));
  const notify = (event: 'credential_accepted' | 'credential_failure', description?: string) =>
    answer.notificationId
      ? sendNotification(deps, state.metadata, token, answer.notificationId, event, description)
      : Promise.resolve();
  try {
    await storeReceivedCredential(deps, account, {
      format: state.format,
      credentialIssuer: row.credential_issuer,
      issuerDisplay: {
        ...issuerDisplayOf(state.metadata, row.credential_issuer),
        credential_name: configurationDisplayName(state.metadata, row.configuration_id),
        claim_names: configurationClaimNames(state.metadata, row.configuration_id),
      },
      copies: copiesOf(answer.credentials, keys),
      notification: notificationRecord({ metadata: state.metadata }, token, answer.notificationId ?? null),
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : 'it could not be stored';
    await notify('credential_failure', why);
    return settle(deps.db, row, { status: 'failed', failure: why.slice(0, 500) });
  }
  await notify('credential_accepted');
  await settle(deps.db, row, { status: 'done' });
}

/** Polls every due deferred issuance once (at most 20 per round); returns how many were due. */
export async function pollDeferredIssuances(deps: DeferredDeps & { now: () => Date }): Promise<number> {
  const due = await deps.db
    .selectFrom('deferred_issuances')
    .select([
      'deferred_pk',
      'user_id',
      'credential_issuer',
      'configuration_id',
      'created_at',
      'next_poll_at',
      'give_up_at',
      'state_sealed',
    ])
    .where('status', '=', 'pending')
    .where('next_poll_at', '<=', deps.now().toISOString())
    .orderBy('next_poll_at')
    .limit(20)
    .execute();
  for (const row of due) {
    try {
      await pollRow(deps, row);
    } catch (error) {
      deps.log.warn(
        { deferred: row.deferred_pk, reason: (error as Error).message?.slice(0, 200) },
        'a deferred issuance poll failed',
      );
    }
  }
  return due.length;
}

/** Runs the poller every `everyMs` until stopped; one round at a time. */
export function startDeferredPoller(deps: DeferredDeps & { now: () => Date }, everyMs = 1000) {
  return runPeriodically(() => pollDeferredIssuances(deps), everyMs);
}

/** The deferred issuances of the given accounts, newest first (what the person sees of them). */
export async function listDeferredIssuances(db: Kysely<Database>, userIds: number[]) {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('deferred_issuances')
    .select(['credential_issuer', 'configuration_id', 'status', 'failure', 'created_at'])
    .where('user_id', 'in', userIds)
    .orderBy('deferred_pk', 'desc')
    .limit(100)
    .execute();
}
