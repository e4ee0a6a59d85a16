import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Audit } from '../audit/audit-events.ts';
import { findClient } from '../clients/client-repository.ts';
import type { Config } from '../config/config.ts';
import type { Database, InteractionKind as InteractionKindName } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { hashSecret } from '../keys/secrets.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { ServiceMetrics } from '../telemetry/metrics.ts';
import { logInWithEmail, logInWithWallet } from '../users/user-login.ts';
import { findAccountsOfIdentity, type UserIdentity } from '../users/user-repository.ts';
import type { UserDeps } from '../users/user-service.ts';
import type {
  Asker,
  ExtraLoginMethod,
  FinishedLogin,
  InteractionKind,
  InteractionKinds,
  InteractionView,
  LoginProof,
  LoginType,
} from './interaction-kinds.ts';
import {
  findInteraction,
  finishInteraction,
  type InteractionRow,
  insertInteraction,
  updateInteraction,
} from './interaction-repository.ts';
import { insertSession } from './session-repository.ts';
import { buildSiweChallenge, newSiweNonce, type SiweChallenge } from './siwe.ts';

export interface InteractionDeps {
  db: Kysely<Database>;
  cipher: FieldCipher;
  users: UserDeps;
  mailer: Mailer;
  limiter: RateLimiter;
  /** The flows this instance serves (src/app.ts registers them). */
  kinds: InteractionKinds;
  /** Log-in methods provided from above the core (src/app.ts adds them), offered where they say so. */
  extraLoginMethods: ExtraLoginMethod[];
  config: Pick<Config, 'publicUrl' | 'environment' | 'loginRateLimit'>;
  /** Key of the one-time code HMAC (derived from the master key). */
  oneTimeCodeKey: Uint8Array;
  recaptchaVerifyUrl?: string;
  /** Without SMTP (development), codes are also logged at debug level (DESIGN.md). */
  logCodesAt?: { debug(object: object, message: string): void };
  fetch?: typeof fetch;
  now?: () => Date;
  /** Per-tenant log-in counters for /metrics. */
  metrics?: Pick<ServiceMetrics, 'login'>;
  /** The audit trail: log-ins, successful (with the act) and refused. */
  audit?: Audit;
}

/** An interaction lasts as long as a person may reasonably take to log in. */
export const INTERACTION_TTL_MS = 30 * 60_000;
export const SESSION_TTL_MS = 7 * 24 * 3600_000;

export const clock = (deps: Pick<InteractionDeps, 'now'>) => (deps.now ? deps.now() : new Date());
export const gone = () =>
  new CofferError('not_found', 'This log-in has expired or is unknown; start again from the app.');

/** The identity a person proved: a wallet address or (as its blind index) an e-mail address. */
export type ProvenIdentity =
  | { wallet: string; emailIndex?: undefined }
  | { emailIndex: string; wallet?: undefined; emailIndexes?: readonly string[] };

/** What a new interaction starts with: who asks, what for, and who may already be known. */
export interface NewInteraction {
  kind: InteractionKindName;
  clientId: number | null;
  /** The validated request, as JSON. */
  params: string;
  /** A consent started within a live session: the identity that session proved. */
  identity?: { wallet: string | null; emailIndex: string | null; userId: number } | undefined;
}

export async function startInteraction(deps: InteractionDeps, input: NewInteraction): Promise<string> {
  const id = randomBytes(24).toString('base64url');
  const now = clock(deps);
  await insertInteraction(deps.db, {
    id,
    kind: input.kind,
    client_id: input.clientId,
    params: input.params,
    csrf_token: randomBytes(24).toString('base64url'),
    siwe_nonce: newSiweNonce(),
    otp_hash: null,
    otp_email_sealed: null,
    otp_expires_at: null,
    otp_attempts: 0,
    user_id: input.identity?.userId ?? null,
    login_type: null,
    auth_time: null,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + INTERACTION_TTL_MS).toISOString(),
    finished_at: null,
    identity_wallet: input.identity?.wallet ?? null,
    identity_email_index: input.identity?.emailIndex ?? null,
  });
  return id;
}

const INTERACTION_ID = /^[A-Za-z0-9_-]{16,64}$/;

/** An interaction that can still be used; anything else is "gone" (404) to the person. */
export async function liveInteraction(deps: InteractionDeps, id: string): Promise<InteractionRow> {
  if (!INTERACTION_ID.test(id)) throw gone();
  const row = await findInteraction(deps.db, id);
  if (!row || row.finished_at !== null || row.expires_at <= clock(deps).toISOString()) throw gone();
  return row;
}

/** The registered kind of a live interaction. */
export function kindOf(deps: InteractionDeps, row: InteractionRow): InteractionKind {
  const kind = deps.kinds.of(row);
  if (!kind) throw gone();
  return kind;
}

/**
 * A browser's POST must carry the token of the page Coffer served for this interaction
 * (`x-csrf-token`), on top of the Origin check and the JSON-only bodies: a page that could send
 * same-origin JSON (a script injected into another page of this origin, a browser that omits
 * Origin) still lacks the token. Headless clients send neither Origin nor Sec-Fetch-Site and
 * are not browsers a forged request could ride on, so they are not asked for it. An unknown
 * interaction passes here and is "gone" (404) in its handler.
 */
export async function checkPageToken(
  deps: InteractionDeps,
  id: string,
  token: string | undefined,
): Promise<void> {
  const row = INTERACTION_ID.test(id) ? await findInteraction(deps.db, id) : undefined;
  if (!row) return;
  if (token === undefined || !sameSecret(token, row.csrf_token)) {
    throw new CofferError(
      'forbidden',
      'This request did not come from the page Coffer served for this log-in; reload the page and try again.',
    );
  }
}

// Digests first: timingSafeEqual needs equal lengths, and the length must not leak either.
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export function siweChallengeOf(deps: InteractionDeps, row: InteractionRow): SiweChallenge {
  const origin = new URL(deps.config.publicUrl);
  return buildSiweChallenge({
    domain: origin.host,
    uri: deps.config.publicUrl,
    chainId: 1,
    nonce: row.siwe_nonce,
    issuedAt: new Date(row.created_at),
    expirationTime: new Date(row.expires_at),
    statement: 'Sign in with your Ethereum account.',
  });
}

/** The log-in methods every interaction offers; an extra method is added where it is offered. */
const BUILT_IN_METHODS = ['wallet', 'email'];

async function methodsOf(deps: InteractionDeps, row: InteractionRow): Promise<string[]> {
  const extra = deps.extraLoginMethods;
  const offered = await Promise.all(extra.map((method) => method.offeredFor(row)));
  return [...BUILT_IN_METHODS, ...extra.filter((_, index) => offered[index]).map((method) => method.name)];
}

export async function describeInteraction(deps: InteractionDeps, id: string): Promise<InteractionView> {
  return viewOf(deps, await liveInteraction(deps, id));
}

async function viewOf(deps: InteractionDeps, row: InteractionRow): Promise<InteractionView> {
  return {
    id: row.id,
    kind: row.kind,
    client: await kindOf(deps, row).asker(row),
    methods: await methodsOf(deps, row),
    siwe: siweChallengeOf(deps, row),
    csrf_token: row.csrf_token,
    email_code_sent: row.otp_hash !== null,
    logged_in: row.identity_wallet !== null || row.identity_email_index !== null,
  };
}

/** The JSON view of `GET /interaction/{id}`: the common part and what the kind adds. */
export async function describeInteractionJson(
  deps: InteractionDeps,
  id: string,
): Promise<InteractionView & Record<string, unknown>> {
  const row = await liveInteraction(deps, id);
  const view = await viewOf(deps, row);
  const kind = kindOf(deps, row);
  return { ...view, ...(await kind.describe?.(id)) };
}

/** The browser session that single sign-on and the wallet page rely on; only its hash is stored. */
export async function startSession(
  deps: InteractionDeps,
  user: UserIdentity,
  loginType: LoginType,
  authTime: number,
): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  await insertSession(deps.db, {
    id_hash: hashSecret(sessionId),
    user_id: user.user_id,
    tenant_id: user.tenant_id,
    login_type: loginType,
    auth_time: authTime,
    expires_at: new Date(clock(deps).getTime() + SESSION_TTL_MS).toISOString(),
  });
  return sessionId;
}

export const authTimeNow = (deps: InteractionDeps) => Math.floor(clock(deps).getTime() / 1000);

/**
 * The person proved by `proof` logs in to `tenant` (signed up there when unknown, as the e-mail
 * and wallet methods do): the interaction is finished with them, and a browser session starts.
 * The kinds that log people into a tenant (the OP's log-in, the issuer's) share this step.
 */
export async function logInToTenant(
  deps: InteractionDeps,
  row: InteractionRow,
  tenant: number,
  proof: LoginProof,
): Promise<{ user: UserIdentity; authTime: number; sessionId: string }> {
  const user =
    proof.method === 'wallet'
      ? await logInWithWallet(deps.users, tenant, proof.address, proof.chainId)
      : await logInWithEmail(deps.users, tenant, proof.email);
  const authTime = authTimeNow(deps);
  const finished = await deps.db.transaction().execute(async (tx) => {
    const done = await finishInteraction(tx, row.id, {
      user_id: user.user_id,
      login_type: proof.method,
      auth_time: authTime,
    });
    const targets = { user_id: user.user_id, method: proof.method };
    if (done)
      await deps.audit?.record(tx, {
        clientId: tenant,
        actor: `person:${user.user_id}`,
        type: 'login',
        targets,
      });
    return done;
  });
  if (!finished) throw gone();
  const sessionId = await startSession(deps, user, proof.method, authTime);
  return { user, authTime, sessionId };
}

/** The asker of a tenant log-in: the interaction's client, as its row says now. */
export async function clientAsker(deps: Pick<InteractionDeps, 'db'>, row: InteractionRow): Promise<Asker> {
  const client = row.client_id === null ? undefined : await findClient(deps.db, row.client_id);
  if (!client) throw gone();
  return { client_id: client.client_id, name: client.name, privacy_link: client.privacy_link };
}

export function identityOfProof(deps: InteractionDeps, proof: LoginProof): ProvenIdentity {
  // A credential log-in proves the e-mail address its verified claim names.
  return proof.method === 'wallet'
    ? { wallet: proof.address.toLowerCase() }
    : emailIdentity(deps.users.emailIndexes(proof.email));
}

/** The proven e-mail's index under the current key, and under each key of the ring for lookups. */
function emailIdentity(indexes: string[]): ProvenIdentity {
  return { emailIndex: indexes[0]!, emailIndexes: indexes };
}

/**
 * A proven identity reaches the interaction's kind: an app's log-in answers with a code, a
 * consent or an offer continues to the person's decision, the wallet page opens. Every log-in
 * method ends here, so a new method is one more caller.
 */
export async function completeLogIn(
  deps: InteractionDeps,
  row: InteractionRow,
  proof: LoginProof,
): Promise<FinishedLogin> {
  const kind = kindOf(deps, row);
  if (!kind.logIn) throw gone();
  const finished = await kind.logIn(row, proof);
  deps.metrics?.login(row.client_id, proof.method, 'success');
  return finished;
}

/**
 * In a consent or an issuance, the wallet belongs to the person, not to a tenant (DESIGN.md, Hosted wallet):
 * the proven wallet address or e-mail is kept on the interaction, and the consent that follows
 * offers the credentials of every account with it. Nobody is signed up here; a session starts
 * for the first such account, so the next request of any verifier needs no log-in.
 */
export async function continueWithIdentity(
  deps: InteractionDeps,
  row: InteractionRow,
  proof: LoginProof,
): Promise<FinishedLogin> {
  const identity = identityOfProof(deps, proof);
  const authTime = authTimeNow(deps);
  const [account] = await findAccountsOfIdentity(deps.db, identity);
  await updateInteraction(deps.db, row.id, {
    identity_wallet: identity.wallet ?? null,
    // The accounts' own index: until a master-key rotation reaches them it is the previous key's.
    identity_email_index: identity.emailIndex ? (account?.email_index ?? identity.emailIndex) : null,
    user_id: account?.user_id ?? null,
    login_type: proof.method,
    auth_time: authTime,
  });
  const sessionId = account ? await startSession(deps, account, proof.method, authTime) : undefined;
  return {
    next: 'consent',
    ...(sessionId ? { sessionId } : {}),
    sessionMaxAgeSeconds: SESSION_TTL_MS / 1000,
  };
}

/** Sign-out inside a presentation or an offer: whoever logged in to it is forgotten. */
export async function forgetInteractionIdentity(deps: InteractionDeps, id: string): Promise<void> {
  const row = await liveInteraction(deps, id);
  const kind = kindOf(deps, row);
  // Only where a wallet's identity was proven for a decision still to come.
  if (kind.tenantLogin || !kind.logIn || kind.answer?.at !== 'consent') throw gone();
  await updateInteraction(deps.db, id, {
    identity_wallet: null,
    identity_email_index: null,
    user_id: null,
    login_type: null,
    auth_time: null,
  });
}

/** A field of the answer that this kind of interaction does not take. */
export const notTakenHere = (field: string, what: string) =>
  new CofferError('invalid_request', `${field} does not belong in the answer to ${what}.`, {
    details: [{ path: `/body/${field}`, message: `is not taken for ${what}` }],
  });
