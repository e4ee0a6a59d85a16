/** Integer <-> octet string conversions of RFC 8017 (I2OSP / OS2IP), big-endian. */

export function i2osp(value: bigint | number, length: number): Uint8Array {
  let rest = BigInt(value);
  if (rest < 0n || rest >= 1n << BigInt(8 * length)) {
    throw new RangeError(`integer does not fit in ${length} octets`);
  }
  const octets = new Uint8Array(length);
  for (let i = length - 1; i >= 0 && rest > 0n; i--) {
    octets[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return octets;
}

/** I2OSP for lengths and indexes, which stay far below 2^53 (no bigint round trip). */
export function i2osp8(value: number): Uint8Array {
  const octets = new Uint8Array(8);
  new DataView(octets.buffer).setBigUint64(0, BigInt(value));
  return octets;
}

export function os2ip(octets: Uint8Array): bigint {
  if (octets.length === 0) return 0n;
  return BigInt(`0x${Buffer.from(octets.buffer, octets.byteOffset, octets.byteLength).toString('hex')}`);
}

/** A fresh Uint8Array (not a Buffer, which may share Node's pooled memory with unrelated data). */
export function concatOctets(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const octets = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    octets.set(part, offset);
    offset += part.length;
  }
  return octets;
}
