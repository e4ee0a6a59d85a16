import { findClient } from '../clients/client-repository.ts';
import { CofferError } from '../errors.ts';
import { loginCodeEmail } from '../mail/login-code-email.ts';
import type {
  ExtraLoginMethod,
  ExtraLoginMethodName,
  FinishedLogin,
  InteractionKind,
} from './interaction-kinds.ts';
import { countOneTimeCodeAttempt, type InteractionRow, updateInteraction } from './interaction-repository.ts';
import {
  clock,
  completeLogIn,
  gone,
  type InteractionDeps,
  kindOf,
  liveInteraction,
} from './interaction-service.ts';
import { checkOneTimeCode, hashOneTimeCode, newOneTimeCode, ONE_TIME_CODE_TTL_MS } from './one-time-code.ts';
import { RECAPTCHA_VERIFY_URL, verifyRecaptcha } from './recaptcha.ts';
import { verifySiweLogin } from './siwe.ts';

/**
 * The two built-in log-in methods, Sign-In with Ethereum and an e-mail code, as steps on an
 * interaction. Each ends in `completeLogIn`, where the interaction's kind takes over.
 */

/** Log-in attempts per address and minute (LOGIN_RATE_LIMIT); 0 turns the per-address limit off. */
async function hitLoginLimit(deps: InteractionDeps, ip: string): Promise<void> {
  if (deps.config.loginRateLimit > 0)
    await deps.limiter.hit(`login:ip:${ip}`, deps.config.loginRateLimit, 60);
}
const MAX_CODES_SENT = 5;

/** An interaction in which someone logs in, with its kind; a sign-out confirmation has no log-in. */
async function loginInteraction(
  deps: InteractionDeps,
  id: string,
): Promise<{ row: InteractionRow; kind: InteractionKind }> {
  const row = await liveInteraction(deps, id);
  const kind = kindOf(deps, row);
  if (!kind.logIn) throw gone();
  return { row, kind };
}

/** The rate-limit bucket of codes sent to one e-mail address; it names the address's blind index. */
export const emailSendBucket = (emailIndex: string) => `login:email-to:${emailIndex}`;

export async function logInWithSiwe(
  deps: InteractionDeps,
  id: string,
  body: { message: string; signature: string },
  ip: string,
): Promise<FinishedLogin> {
  await hitLoginLimit(deps, ip);
  const { row } = await loginInteraction(deps, id);
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
  }).catch(async (error: unknown) => {
    deps.metrics?.login(row.client_id, 'wallet', 'failure');
    await recordRefusedLogin(deps, row.client_id, 'wallet', 'bad_signature');
    throw error;
  });
  return completeLogIn(deps, row, { method: 'wallet', address, chainId });
}

/** A refused log-in is an audit event of its own (a failure): nobody is known yet, so no person. */
function recordRefusedLogin(deps: InteractionDeps, clientId: number | null, method: string, reason: string) {
  const event = { clientId, actor: 'person:unknown', type: 'login', targets: { method } } as const;
  return deps.audit?.record(deps.db, { ...event, outcome: 'failure', reason });
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

/** Whether a (trimmed) value reads as an e-mail address an account can have: every log-in checks this one way. */
export const isEmailAddress = (value: string) => value.length <= 254 && EMAIL.test(value);

export async function sendEmailCode(
  deps: InteractionDeps,
  id: string,
  body: { email: string; recaptcha_token?: string | undefined },
  ip: string,
): Promise<void> {
  await hitLoginLimit(deps, ip);
  const { row, kind } = await loginInteraction(deps, id);
  const email = body.email.trim();
  if (!isEmailAddress(email)) {
    throw new CofferError('invalid_request', 'That is not an e-mail address.', {
      details: [{ path: '/body/email', message: 'must be an e-mail address' }],
    });
  }
  await deps.limiter.hit(`login:email-send:${id}`, MAX_CODES_SENT, 1800);
  await deps.limiter.hit(emailSendBucket(deps.users.emailIndex(email)), 10, 3600);
  if (row.otp_attempts >= 5) throw locked();

  const client = row.client_id === null ? undefined : await findClient(deps.db, row.client_id);
  if (!client && kind.tenantLogin) throw gone();
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
  const tenantName = kind.tenantLogin && client ? client.name : `your wallet at ${host}`;
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
  const { row } = await loginInteraction(deps, id);
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
    deps.metrics?.login(row.client_id, 'email', 'failure');
    await recordRefusedLogin(deps, row.client_id, 'email', `code_${check.reason}`);
    if (check.reason === 'locked') throw locked();
    if (check.reason === 'expired')
      throw new CofferError('invalid_request', 'The code has expired; ask for a new one.');
    const attempts = await countOneTimeCodeAttempt(deps.db, id);
    if (attempts >= 5) throw locked();
    throw new CofferError('invalid_request', `The code is wrong; ${5 - attempts} tries left.`);
  }
  const email = deps.cipher.decrypt(row.otp_email_sealed, `interactions/${id}/email`);
  return completeLogIn(deps, row, { method: 'email', email });
}

/** An extra method this interaction offers; anything else is "gone" (404), as an unknown row is. */
async function offeredMethod(
  deps: InteractionDeps,
  name: ExtraLoginMethodName,
  id: string,
): Promise<{ row: InteractionRow; method: ExtraLoginMethod }> {
  const { row } = await loginInteraction(deps, id);
  const method = deps.extraLoginMethods.find((candidate) => candidate.name === name);
  if (!method || !(await method.offeredFor(row))) throw gone();
  return { row, method };
}

/** `POST /interaction/{id}/login/{name}`: starts an extra method (a wallet request, for instance). */
export async function startExtraLogin(
  deps: InteractionDeps,
  name: ExtraLoginMethodName,
  id: string,
  ip: string,
): Promise<Record<string, unknown>> {
  await hitLoginLimit(deps, ip);
  const { row, method } = await offeredMethod(deps, name, id);
  await deps.limiter.hit(`login:${name}-start:${id}`, 10, 1800);
  return method.start(row);
}

/**
 * `POST /interaction/{id}/login/{name}/check`, polled by the page: pending, or the proof goes to
 * the interaction's kind like any other method's. A check only reads (the proof was made
 * elsewhere, by the wallet), so it is not counted as a log-in attempt.
 */
export async function checkExtraLogin(
  deps: InteractionDeps,
  name: ExtraLoginMethodName,
  id: string,
): Promise<FinishedLogin | { pending: string }> {
  const { row, method } = await offeredMethod(deps, name, id);
  const checked = await method.check(row);
  if ('pending' in checked) return checked;
  return completeLogIn(deps, row, checked.proof);
}
