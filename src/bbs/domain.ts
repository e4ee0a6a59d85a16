/** calculate_domain: binds a signature to the public key, the generators and the header. */
import { API_ID, HASH_TO_SCALAR_DST } from './ciphersuite.ts';
import type { Generators } from './generators.ts';
import { hashToScalar } from './hash-to-scalar.ts';
import { concatOctets, i2osp8 } from './octets.ts';

export function calculateDomain(publicKey: Uint8Array, generators: Generators, header: Uint8Array): bigint {
  // dom_input = PK || serialize((L, Q_1, H_1, ..., H_L)) || api_id || I2OSP(length(header), 8) || header
  return hashToScalar(
    concatOctets([
      publicKey,
      i2osp8(generators.h.length),
      generators.encoded,
      API_ID,
      i2osp8(header.length),
      header,
    ]),
    HASH_TO_SCALAR_DST,
  );
}
