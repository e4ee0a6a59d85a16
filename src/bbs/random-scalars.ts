/** The random scalars of proof generation: a CSPRNG in use, the draft's mocked ones in tests. */
import { randomBytes } from 'node:crypto';
import { EXPAND_LENGTH, Fr } from './ciphersuite.ts';
import { expandMessageXmd } from './hash-to-scalar.ts';
import { os2ip } from './octets.ts';

/** Returns `count` scalars mod r; proof generation takes one as a parameter. */
export type RandomScalars = (count: number) => bigint[];

function scalarsFromUniformOctets(uniform: Uint8Array, count: number): bigint[] {
  const scalars: bigint[] = [];
  for (let i = 0; i < count; i++) {
    scalars.push(Fr.create(os2ip(uniform.subarray(i * EXPAND_LENGTH, (i + 1) * EXPAND_LENGTH))));
  }
  return scalars;
}

/** calculate_random_scalars: EXPAND_LENGTH fresh CSPRNG octets per scalar. */
export const secureRandomScalars: RandomScalars = (count) =>
  scalarsFromUniformOctets(randomBytes(count * EXPAND_LENGTH), count);

/**
 * mocked_calculate_random_scalars of the draft's test vectors: the scalars expanded from a fixed
 * seed. Deterministic and public, so for reproducing fixtures only.
 */
export function mockedRandomScalars(seed: Uint8Array, dst: Uint8Array): RandomScalars {
  return (count) => scalarsFromUniformOctets(expandMessageXmd(seed, dst, count * EXPAND_LENGTH), count);
}
