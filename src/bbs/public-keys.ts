/**
 * Decoded public keys, kept for the next verification. A verifier sees the same few issuer keys
 * over and over; keeping the key saves its subgroup check and the Miller-loop lines of W
 * (together ~0.7 ms of a ~6 ms verification). A miss costs about what the uncached path costs, so
 * a stream of distinct keys cannot make verification slower than without the cache.
 */
import { createLru } from '../lru.ts';
import { g2FromBytes, type PreparedG2, prepareG2, releaseG2 } from './curve.ts';

const prepared = createLru<string, PreparedG2>(64, releaseG2);

/** octets_to_pubkey (a G2 subgroup point, not the identity), prepared for pairings. */
export function publicKeyFromOctets(octets: Uint8Array): PreparedG2 | undefined {
  const key = Buffer.from(octets.buffer, octets.byteOffset, octets.byteLength).toString('hex');
  const hit = prepared.get(key);
  if (hit !== undefined) return hit;
  const point = g2FromBytes(octets);
  if (point === undefined) return undefined;
  const fresh = prepareG2(point);
  prepared.set(key, fresh);
  return fresh;
}
