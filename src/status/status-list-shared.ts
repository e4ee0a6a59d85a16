import { createPublicKey, KeyObject } from 'node:crypto';
import type { inflateSync } from 'node:zlib';
import type { IssuerPublicKey } from '../formats/credential-format.ts';

export type CredentialStatusState = 'valid' | 'revoked' | 'suspended' | 'unknown';

export interface StatusOutcome {
  state: CredentialStatusState;
  /** Why the state is unknown, for the page. */
  reason?: string;
}

/** Why a status list cannot be used; the message completes "status unknown (…)" on the page. */
export class StatusListError extends Error {
  override readonly name = 'StatusListError';
}

/**
 * Statuses are read from the bytes as they are: a decompressed list beyond this is refused, so a
 * small compressed body cannot expand into gigabytes (the widest lists in use are far smaller).
 */
export const MAX_LIST_BYTES = 4 * 1024 * 1024;

export const CLOCK_SKEW_MS = 60_000;

/** The JWS algorithms a list may be signed with (EdDSA also by its fully specified name). */
export const LIST_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export function verificationKey(issuerKey: Extract<IssuerPublicKey, { kind: 'jose' }>): KeyObject {
  const { key } = issuerKey;
  if (!(key instanceof KeyObject)) return createPublicKey({ key, format: 'jwk' });
  return key.type === 'public' ? key : createPublicKey(key);
}

/** zlib (Token Status List) or gzip (Bitstring Status List) bytes, bounded by MAX_LIST_BYTES. */
export function decompress(compressed: Buffer, inflate: typeof inflateSync, what: string): Uint8Array {
  try {
    return new Uint8Array(inflate(compressed, { maxOutputLength: MAX_LIST_BYTES }));
  } catch (error) {
    throw new StatusListError(
      (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
        ? `the status list is larger than ${MAX_LIST_BYTES / 1024 / 1024} MiB`
        : `the status list's ${what} cannot be decompressed`,
    );
  }
}

/** A date claim (seconds) or VC date (string) as milliseconds; absent is null, malformed refused. */
export function timeOf(value: unknown, what: string): number | null {
  if (value === undefined) return null;
  const time =
    typeof value === 'number' ? value * 1000 : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(time)) throw new StatusListError(`the status list's ${what} is not a time`);
  return time;
}

export function checkNotExpired(expiresAt: number | null, now: Date): void {
  if (expiresAt !== null && expiresAt <= now.getTime() - CLOCK_SKEW_MS) {
    throw new StatusListError(`the status list expired at ${new Date(expiresAt).toISOString()}`);
  }
}
