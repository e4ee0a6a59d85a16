import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * One-time codes for the e-mail log-in: six digits sent to the person, kept only as a hash
 * bound to the interaction, so that a code is worthless in any other interaction.
 */

export const ONE_TIME_CODE_MAX_ATTEMPTS = 5;
export const ONE_TIME_CODE_TTL_MS = 10 * 60_000;

/** Six decimal digits, uniform over 000000–999999 (randomInt rejects biased draws). */
export function newOneTimeCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** People paste codes with spaces or dashes ("123 456"); those are not part of the code. */
function normalize(code: string): string {
  return code.replace(/[\s-]/g, '');
}

/**
 * The hash kept for a code. With `key` (derive it from the master key) it is an HMAC, so that
 * someone who reads the database cannot recover a live code by trying all 10⁶; without a key it
 * is SHA-256, which binds the code to the interaction but hides it only from casual reading.
 */
export function hashOneTimeCode(code: string, interactionId: string, key?: Uint8Array): string {
  const input = `coffer/one-time-code\0${interactionId}\0${normalize(code)}`;
  const hash = key ? createHmac('sha256', key) : createHash('sha256');
  return hash.update(input, 'utf8').digest('base64url');
}

export interface OneTimeCodeState {
  hash: string;
  expiresAt: Date;
  /** Wrong submissions so far. */
  attempts: number;
}

export type OneTimeCodeCheck =
  | { ok: true }
  | { ok: false; reason: 'wrong' | 'expired' | 'locked'; attemptsLeft: number };

/**
 * Checks a submitted code. Pure: the caller stores `attempts + 1` after a `wrong` answer and
 * deletes the code after `ok` (single use). An expired or locked code needs a new one, so those
 * answers say so before any comparison is made.
 */
export function checkOneTimeCode(
  state: OneTimeCodeState,
  submitted: string,
  now: Date,
  binding: { interactionId: string; key?: Uint8Array },
): OneTimeCodeCheck {
  const left = Math.max(0, ONE_TIME_CODE_MAX_ATTEMPTS - state.attempts);
  if (now.getTime() >= state.expiresAt.getTime()) return { ok: false, reason: 'expired', attemptsLeft: left };
  if (left === 0) return { ok: false, reason: 'locked', attemptsLeft: 0 };

  const expected = Buffer.from(state.hash);
  const actual = Buffer.from(hashOneTimeCode(submitted, binding.interactionId, binding.key));
  // Both are base64url SHA-256 digests, so the lengths match unless the stored hash is damaged.
  const matches = expected.length === actual.length && timingSafeEqual(expected, actual);
  return matches ? { ok: true } : { ok: false, reason: 'wrong', attemptsLeft: left - 1 };
}
