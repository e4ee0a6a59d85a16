import { CofferError } from '../errors.ts';

/**
 * reCAPTCHA v3 for the e-mail log-in of tenants that turned it on: the token the page got from
 * Google is checked with Google's siteverify endpoint. Anything short of a clear pass refuses
 * the request (fail closed), because the check exists to stop mass sending of e-mails.
 */

export const RECAPTCHA_VERIFY_URL = 'https://www.google.com/recaptcha/api/siteverify';
const DEFAULT_TIMEOUT_MS = 5000;

interface SiteverifyAnswer {
  success?: unknown;
  score?: unknown;
  action?: unknown;
  'error-codes'?: unknown;
}

const refused = (sentence: string) => new CofferError('invalid_request', sentence);
const unverifiable = () => refused('reCAPTCHA could not be verified just now; please try again in a moment.');

/** Google's error codes that are the person's to fix by trying again; the rest are ours. */
function failureSentence(codes: unknown): string {
  const list = Array.isArray(codes) ? codes.map(String) : [];
  if (list.includes('timeout-or-duplicate')) {
    return 'The reCAPTCHA check expired or was already used; please try again.';
  }
  if (list.includes('invalid-input-response') || list.includes('missing-input-response')) {
    return 'The reCAPTCHA token is not valid; please try again.';
  }
  return 'reCAPTCHA could not be verified; please try again later.';
}

async function askSiteverify(input: {
  secret: string;
  token: string;
  remoteIp?: string | undefined;
  verifyUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
}): Promise<SiteverifyAnswer> {
  const form = new URLSearchParams({ secret: input.secret, response: input.token });
  if (input.remoteIp) form.set('remoteip', input.remoteIp);
  try {
    const response = await input.fetch(input.verifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: AbortSignal.timeout(input.timeoutMs),
      redirect: 'error',
    });
    if (response.status !== 200) throw new Error(`siteverify answered ${response.status}`);
    const answer: unknown = await response.json();
    if (typeof answer !== 'object' || answer === null) throw new Error('siteverify answered no object');
    return answer as SiteverifyAnswer;
  } catch {
    throw unverifiable();
  }
}

/**
 * Resolves when Google confirms the token with a score of at least `threshold` (and, when
 * `action` is given, for that action); throws CofferError('invalid_request') otherwise.
 */
export async function verifyRecaptcha(input: {
  secret: string;
  token: unknown;
  remoteIp?: string | undefined;
  threshold: number;
  /** The action the page named in grecaptcha.execute; checked when given. */
  action?: string | undefined;
  verifyUrl: string;
  fetch: typeof fetch;
  /** 5 s unless given; Google answers in well under a second. */
  timeoutMs?: number;
}): Promise<void> {
  const { token } = input;
  if (typeof token !== 'string' || token.length === 0) {
    throw refused('This log-in needs a reCAPTCHA token (recaptcha_token).');
  }
  if (token.length > 4096) throw refused('The reCAPTCHA token is not valid; please try again.');

  const answer = await askSiteverify({ ...input, token, timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  if (answer.success !== true) throw refused(failureSentence(answer['error-codes']));
  if (typeof answer.score !== 'number') {
    // A v2 token carries no score; a threshold cannot be applied to it.
    throw refused('The reCAPTCHA answer carried no score; please try again.');
  }
  if (input.action !== undefined && answer.action !== input.action) {
    throw refused('The reCAPTCHA token was made for another action; please try again.');
  }
  if (answer.score < input.threshold) {
    throw refused(
      'reCAPTCHA judged this request as automated; please try again later or use another way to log in.',
    );
  }
}
