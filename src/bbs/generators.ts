/**
 * create_generators, computed once per process and extended on demand: the sequence for n is a
 * prefix of the sequence for any m > n (each generator is hashed from the previous seed state),
 * so the cache keeps the last seed state and appends.
 */
import {
  EXPAND_LENGTH,
  GENERATOR_DST,
  GENERATOR_SEED,
  GENERATOR_SEED_DST,
  MAX_MESSAGES,
} from './ciphersuite.ts';
import { type G1, g1ToBytes, hashToG1, keepForMultiScalarMul } from './curve.ts';
import { expandMessageXmd } from './hash-to-scalar.ts';
import { concatOctets, i2osp8 } from './octets.ts';

export interface Generators {
  /** Q_1, the generator of the domain. */
  readonly q1: G1;
  /** H_1, ..., H_L, one per message. */
  readonly h: readonly G1[];
  /** serialize((Q_1, H_1, ..., H_L)): the compressed points, as hashed into the domain. */
  readonly encoded: Uint8Array;
}

const points: G1[] = [];
const encodings: Uint8Array[] = [];
let seedState = expandMessageXmd(GENERATOR_SEED, GENERATOR_SEED_DST, EXPAND_LENGTH);

function extendTo(count: number): void {
  const first = points.length;
  for (let i = points.length + 1; i <= count; i++) {
    seedState = expandMessageXmd(concatOctets([seedState, i2osp8(i)]), GENERATOR_SEED_DST, EXPAND_LENGTH);
    const point = hashToG1(seedState, GENERATOR_DST);
    points.push(point);
    encodings.push(g1ToBytes(point));
  }
  // Every signature, verification and proof takes the generators into a multi-scalar multiplication.
  if (points.length > first) keepForMultiScalarMul(points.slice(first));
}

/** create_generators(count): the first `count` generators (count >= 1). */
export function createGenerators(count: number): { points: G1[]; encodings: Uint8Array[] } {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError('generator count must be >= 1');
  extendTo(count);
  return { points: points.slice(0, count), encodings: encodings.slice(0, count) };
}

/** The generators for `messageCount` messages: Q_1 followed by H_1..H_L. */
export function messageGenerators(messageCount: number): Generators {
  if (messageCount > MAX_MESSAGES) throw new RangeError(`more than ${MAX_MESSAGES} messages`);
  const { points: all, encodings: allEncodings } = createGenerators(messageCount + 1);
  return { q1: all[0]!, h: all.slice(1), encoded: concatOctets(allEncodings) };
}
