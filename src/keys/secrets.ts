import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Prefixes make leaked secrets recognisable to secret scanners and to people. */
export type SecretKind = 'api_token' | 'client_secret' | 'refresh_token';
const PREFIX: Record<SecretKind, string> = {
  api_token: 'cfr_at_',
  client_secret: 'cfr_cs_',
  refresh_token: 'cfr_rt_',
};

// Each call into OpenSSL's generator costs about 6 µs whatever the size, a tenth of a token
// refresh; so the bytes are drawn 8 KiB at a time, as node's randomUUID does, and each
// secret takes the next 32 (never reused: the pool is refilled, not rewound).
const POOL_SIZE = 8192;
let pool = Buffer.alloc(0);
let offset = 0;

function random32(): Buffer {
  if (offset + 32 > pool.length) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 32);
  offset += 32;
  return bytes;
}

/** 256 random bits, base64url, with a kind prefix. Shown once; only its hash is kept. */
export function generateSecret(kind: SecretKind): string {
  return PREFIX[kind] + random32().toString('base64url');
}

/**
 * SHA-256 is enough here: the secrets carry 256 random bits, so no guessing attack on the hash
 * is possible, and a fast hash lets every request look its token up by hash.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

export function secretMatchesHash(secret: string, hash: string): boolean {
  const a = Buffer.from(hashSecret(secret));
  const b = Buffer.from(hash);
  return a.length === b.length && timingSafeEqual(a, b);
}
