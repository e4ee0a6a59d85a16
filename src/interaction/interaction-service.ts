import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { Config } from '../config/config.ts';
import type { Database, InteractionKind } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { hashSecret } from '../keys/secrets.ts';
import { loginCodeEmail } from '../mail/login-code-email.ts';
import type { Mailer } from '../mail/mailer.ts';
import {
  type AuthorizationRequest,
  authorizationResponse,
  issueAuthorizationCode,
} from '../oidc/authorization.ts';
import { logInWithEmail, logInWithWallet } from '../users/user-login.ts';
import { findAccountsOfIdentity, type UserIdentity } from '../users/user-repository.ts';
import type { UserDeps } from '../users/user-service.ts';
import {
  countOneTimeCodeAttempt,
  findInteraction,
  finishInteraction,
  type InteractionRow,
  insertInteraction,
  updateInteraction,
} from './interaction-repository.ts';
import { checkOneTimeCode, hashOneTimeCode, newOneTimeCode, ONE_TIME_CODE_TTL_MS } from './one-time-code.ts';
import { RECAPTCHA_VERIFY_URL, verifyRecaptcha } from './recaptcha.ts';
import { insertSession } from './session-repository.ts';
import { buildSiweChallenge, newSiweNonce, type SiweChallenge, verifySiweLogin } from './siwe.ts';

export interface InteractionDeps {
  db: Kysely<Database>;
  cipher: FieldCipher;
  users: UserDeps;
  mailer: Mailer;
  limiter: RateLimiter;
  config: Pick<Config, 'publicUrl' | 'environment' | 'loginRateLimit'>;
  /** Key of the one-time code HMAC (derived from the master key). */
  oneTimeCodeKey: Uint8Array;
  recaptchaVerifyUrl?: string;
  /** Without SMTP (development), codes are also logged at debug level (DESIGN.md). */
  logCodesAt?: { debug(object: object, message: string): void };
  fetch?: typeof fetch;
  now?: () => Date;
}

/** An interaction lasts as long as a person may reasonably take to log in. */
export const INTERACTION_TTL_MS = 30 * 60_000;
export const SESSION_TTL_MS = 7 * 24 * 3600_000;

/** Log-in attempts per address and minute (LOGIN_RATE_LIMIT); 0 turns the per-address limit off. */
async function hitLoginLimit(deps: InteractionDeps, ip: string): Promise<void> {
  if (deps.config.loginRateLimit > 0)
    await deps.limiter.hit(`login:ip:${ip}`, deps.config.loginRateLimit, 60);
}
const MAX_CODES_SENT = 5;

const clock = (deps: InteractionDeps) => (deps.now ? deps.now() : new Date());
export const gone = () =>
  new CofferError('not_found', 'This log-in has expired or is unknown; start again from the app.');

/** What a new interaction starts with: who asks, what for, and who may already be known. */
export interface NewInteraction {
  kind: InteractionKind;
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

export function startLoginInteraction(deps: InteractionDeps, request: AuthorizationRequest): Promise<string> {
  return startInteraction(deps, {
    kind: 'login',
    clientId: request.clientId,
    params: JSON.stringify(request),
  });
}

const INTERACTION_ID = /^[A-Za-z0-9_-]{16,64}$/;

/** An interaction that can still be used; anything else is "gone" (404) to the person. */
export async function liveInteraction(deps: InteractionDeps, id: string): Promise<InteractionRow> {
  if (!INTERACTION_ID.test(id)) throw gone();
  const row = await findInteraction(deps.db, id);
  if (!row || row.finished_at !== null || row.expires_at <= clock(deps).toISOString()) throw gone();
  return row;
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

function siweChallengeOf(deps: InteractionDeps, row: InteractionRow): SiweChallenge {
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

export interface InteractionView {
  id: string;
  kind: InteractionKind;
  /** Who asks: the client, for a consent the verifier, for an issuance the credential issuer (client_id null when it is not a client). */
  client: { client_id: number | null; name: string; privacy_link: string | null };
  methods: Array<'wallet' | 'email'>;
  siwe: SiweChallenge;
  csrf_token: string;
  email_code_sent: boolean;
  /** For a consent: whether the person has proved who they are in it. */
  logged_in: boolean;
}

/** What a consent interaction keeps in `params` that the log-in part needs to show. */
interface ConsentDisplay {
  verifier: { name: string; privacyLink: string | null };
}

/** What an issuance interaction keeps in `params` that the log-in part needs to show. */
interface IssuanceDisplay {
  issuer: { name: string };
}

async function askerOf(deps: InteractionDeps, row: InteractionRow): Promise<InteractionView['client']> {
  if (row.kind === 'consent') {
    const { verifier } = JSON.parse(row.params) as ConsentDisplay;
    return { client_id: row.client_id, name: verifier.name, privacy_link: verifier.privacyLink };
  }
  if (row.kind === 'issuance') {
    const { issuer } = JSON.parse(row.params) as IssuanceDisplay;
    return { client_id: null, name: issuer.name, privacy_link: null };
  }
  if (row.kind === 'wallet') return { client_id: null, name: 'your wallet', privacy_link: null };
  if (row.kind === 'logout') {
    const { clientName } = JSON.parse(row.params) as { clientName: string | null };
    return { client_id: row.client_id, name: clientName ?? '', privacy_link: null };
  }
  const client = row.client_id === null ? undefined : await findClient(deps.db, row.client_id);
  if (!client) throw gone();
  return { client_id: client.client_id, name: client.name, privacy_link: client.privacy_link };
}

export async function describeInteraction(deps: InteractionDeps, id: string): Promise<InteractionView> {
  const row = await liveInteraction(deps, id);
  return {
    id: row.id,
    kind: row.kind,
    client: await askerOf(deps, row),
    methods: ['wallet', 'email'],
    siwe: siweChallengeOf(deps, row),
    csrf_token: row.csrf_token,
    email_code_sent: row.otp_hash !== null,
    logged_in: row.identity_wallet !== null || row.identity_email_index !== null,
  };
}

export interface FinishedLogin {
  /** Where the browser goes: back to the client with a code. Absent when the consent comes next. */
  redirectTo?: string;
  next?: 'consent';
  /** The session cookie's value; only its hash is stored. Absent when no account was found. */
  sessionId?: string;
  sessionMaxAgeSeconds: number;
}

async function startSession(deps: InteractionDeps, user: UserIdentity, loginType: string, authTime: number) {
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

/** The person is known: remember them (single sign-on), answer the client with a code. */
async function finishLogin(
  deps: InteractionDeps,
  row: InteractionRow,
  user: UserIdentity,
  loginType: 'email' | 'wallet',
): Promise<FinishedLogin> {
  const authTime = Math.floor(clock(deps).getTime() / 1000);
  if (
    !(await finishInteraction(deps.db, row.id, {
      user_id: user.user_id,
      login_type: loginType,
      auth_time: authTime,
    }))
  ) {
    throw gone();
  }
  const request = JSON.parse(row.params) as AuthorizationRequest;
  const sessionId = await startSession(deps, user, loginType, authTime);
  const code = await issueAuthorizationCode(deps.db, request, user, { loginType, authTime }, authTime);
  return {
    redirectTo: authorizationResponse(request, deps.config.publicUrl, { code }),
    sessionId,
    sessionMaxAgeSeconds: SESSION_TTL_MS / 1000,
  };
}

/** What a person proved in a log-in step. */
export type ProvenIdentity =
  | { wallet: string; emailIndex?: undefined }
  | { emailIndex: string; wallet?: undefined };

/**
 * In a consent or an issuance, the wallet belongs to the person, not to a tenant (DESIGN.md, Hosted wallet):
 * the proven wallet address or e-mail is kept on the interaction, and the consent that follows
 * offers the credentials of every account with it. Nobody is signed up here; a session starts
 * for the first such account, so the next request of any verifier needs no log-in.
 */
async function continueToConsent(
  deps: InteractionDeps,
  row: InteractionRow,
  identity: ProvenIdentity,
  loginType: 'email' | 'wallet',
): Promise<FinishedLogin> {
  const authTime = Math.floor(clock(deps).getTime() / 1000);
  const [account] = await findAccountsOfIdentity(deps.db, identity);
  if (row.kind === 'wallet') return openWallet(deps, row, account, loginType, authTime);
  await updateInteraction(deps.db, row.id, {
    identity_wallet: identity.wallet ?? null,
    identity_email_index: identity.emailIndex ?? null,
    user_id: account?.user_id ?? null,
    login_type: loginType,
    auth_time: authTime,
  });
  const sessionId = account ? await startSession(deps, account, loginType, authTime) : undefined;
  return {
    next: 'consent',
    ...(sessionId ? { sessionId } : {}),
    sessionMaxAgeSeconds: SESSION_TTL_MS / 1000,
  };
}

/**
 * The wallet page's log-in: the person's session starts for the first account of the identity
 * (the page shows every account's credentials) and the browser goes back to the page. An
 * identity without an account here has no wallet, and nobody is signed up by looking.
 */
async function openWallet(
  deps: InteractionDeps,
  row: InteractionRow,
  account: UserIdentity | undefined,
  loginType: 'email' | 'wallet',
  authTime: number,
): Promise<FinishedLogin> {
  if (!account) {
    throw new CofferError(
      'not_found',
      'No account here belongs to that wallet or e-mail address, so there is no wallet to show.',
    );
  }
  if (
    !(await finishInteraction(deps.db, row.id, {
      user_id: account.user_id,
      login_type: loginType,
      auth_time: authTime,
    }))
  )
    throw gone();
  return {
    redirectTo: '/wallet',
    sessionId: await startSession(deps, account, loginType, authTime),
    sessionMaxAgeSeconds: SESSION_TTL_MS / 1000,
  };
}

/** A log-in step on an interaction that has no log-in (a sign-out confirmation) finds nothing. */
function loginInteraction(row: InteractionRow): InteractionRow {
  if (row.kind === 'logout') throw gone();
  return row;
}

/** The tenant a client's users belong to: the client itself (a sub-client is its own tenant). */
function tenantOfClient(row: InteractionRow): number {
  if (row.client_id === null) throw gone();
  return row.client_id;
}

export async function logInWithSiwe(
  deps: InteractionDeps,
  id: string,
  body: { message: string; signature: string },
  ip: string,
): Promise<FinishedLogin> {
  await hitLoginLimit(deps, ip);
  const row = loginInteraction(await liveInteraction(deps, id));
  await deps.limiter.hit(`login:interaction:${id}`, 10, 600);
  const { address, chainId } = await verifySiweLogin({
    message: body.message,
    signature: body.signature,
    expected: {
      domain: new URL(deps.config.publicUrl).host,
      uri: deps.config.publicUrl,
      nonce: row.siwe_nonce,
      now: clock(deps),
    },
  });
  if (row.kind !== 'login') return continueToConsent(deps, row, { wallet: address.toLowerCase() }, 'wallet');
  const user = await logInWithWallet(deps.users, tenantOfClient(row), address, chainId);
  return finishLogin(deps, row, user, 'wallet');
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

export async function sendEmailCode(
  deps: InteractionDeps,
  id: string,
  body: { email: string; recaptcha_token?: string | undefined },
  ip: string,
): Promise<void> {
  await hitLoginLimit(deps, ip);
  const row = loginInteraction(await liveInteraction(deps, id));
  const email = body.email.trim();
  if (email.length > 254 || !EMAIL.test(email)) {
    throw new CofferError('invalid_request', 'That is not an e-mail address.', {
      details: [{ path: '/body/email', message: 'must be an e-mail address' }],
    });
  }
  await deps.limiter.hit(`login:email-send:${id}`, MAX_CODES_SENT, 1800);
  await deps.limiter.hit(`login:email-to:${deps.users.emailIndex(email)}`, 10, 3600);
  if (row.otp_attempts >= 5) throw locked();

  const client = row.client_id === null ? undefined : await findClient(deps.db, row.client_id);
  if (!client && row.kind === 'login') throw gone();
  if (client && client.recaptcha_enabled === 1 && client.recaptcha_key_sealed) {
    await verifyRecaptcha({
      secret: deps.cipher.decrypt(client.recaptcha_key_sealed, `clients/${client.client_id}/recaptcha_key`),
      token: body.recaptcha_token ?? '',
      remoteIp: ip,
      threshold: client.recaptcha_threshold,
      verifyUrl: deps.recaptchaVerifyUrl ?? RECAPTCHA_VERIFY_URL,
      fetch: deps.fetch ?? fetch,
    });
  }

  const code = newOneTimeCode();
  await updateInteraction(deps.db, id, {
    otp_hash: hashOneTimeCode(code, id, deps.oneTimeCodeKey),
    otp_email_sealed: deps.cipher.encrypt(email, `interactions/${id}/email`),
    otp_expires_at: new Date(clock(deps).getTime() + ONE_TIME_CODE_TTL_MS).toISOString(),
  });
  const host = new URL(deps.config.publicUrl).hostname;
  const from = client?.from_email_address ?? `no-reply@${host}`;
  const tenantName = row.kind !== 'login' ? `your wallet at ${host}` : client!.name;
  await deps.mailer.send(
    loginCodeEmail({ code, tenantName, from, to: email, validMinutes: ONE_TIME_CODE_TTL_MS / 60_000 }),
  );
  deps.logCodesAt?.debug({ interaction: id, code }, 'one-time code written to the outbox');
}

const locked = () =>
  new CofferError(
    'invalid_request',
    'Too many wrong codes: this log-in is locked. Start again from the app.',
  );

export async function verifyEmailCode(
  deps: InteractionDeps,
  id: string,
  body: { code: string },
  ip: string,
): Promise<FinishedLogin> {
  await hitLoginLimit(deps, ip);
  const row = loginInteraction(await liveInteraction(deps, id));
  if (!row.otp_hash || !row.otp_email_sealed || !row.otp_expires_at) {
    throw new CofferError('invalid_request', 'No code was sent for this log-in; ask for one first.');
  }
  const check = checkOneTimeCode(
    { hash: row.otp_hash, expiresAt: new Date(row.otp_expires_at), attempts: row.otp_attempts },
    body.code,
    clock(deps),
    { interactionId: id, key: deps.oneTimeCodeKey },
  );
  if (!check.ok) {
    if (check.reason === 'locked') throw locked();
    if (check.reason === 'expired')
      throw new CofferError('invalid_request', 'The code has expired; ask for a new one.');
    const attempts = await countOneTimeCodeAttempt(deps.db, id);
    if (attempts >= 5) throw locked();
    throw new CofferError('invalid_request', `The code is wrong; ${5 - attempts} tries left.`);
  }
  const email = deps.cipher.decrypt(row.otp_email_sealed, `interactions/${id}/email`);
  if (row.kind !== 'login') {
    return continueToConsent(deps, row, { emailIndex: deps.users.emailIndex(email) }, 'email');
  }
  const user = await logInWithEmail(deps.users, tenantOfClient(row), email);
  return finishLogin(deps, row, user, 'email');
}

/** A sign-out confirmation is answered once; it returns where the app asked the browser to go. */
export async function decideLogout(deps: InteractionDeps, id: string): Promise<string | null> {
  const row = await liveInteraction(deps, id);
  if (row.kind !== 'logout') throw gone();
  if (!(await finishInteraction(deps.db, id, {}))) throw gone();
  return (JSON.parse(row.params) as { returnTo: string | null }).returnTo;
}

/** Sign-out inside a presentation or an offer: whoever logged in to it is forgotten. */
export async function forgetInteractionIdentity(deps: InteractionDeps, id: string): Promise<void> {
  const row = await liveInteraction(deps, id);
  if (row.kind !== 'consent' && row.kind !== 'issuance') throw gone();
  await updateInteraction(deps.db, id, {
    identity_wallet: null,
    identity_email_index: null,
    user_id: null,
    login_type: null,
    auth_time: null,
  });
}

/** Where the mailer writes without SMTP. */
export const outboxDir = (dataDir: string) => path.join(dataDir, 'outbox');
