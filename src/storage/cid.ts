import * as dagCbor from '@ipld/dag-cbor';
import * as dagJson from '@ipld/dag-json';
import { equals } from 'multiformats/bytes';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { StorageError } from './errors.ts';

/**
 * CIDs exactly as Kubo computes them (`ipfs dag put`/`ipfs block put --cid-codec … --mhtype
 * sha2-256`): CIDv1, sha2-256, IPLD codec dag-cbor or dag-json. Stored blocks use dag-cbor;
 * dag-json is here so that Kubo's published vectors can be checked for both codecs.
 */
export type CodecName = 'dag-cbor' | 'dag-json';

const CODECS = { 'dag-cbor': dagCbor, 'dag-json': dagJson } as const;

export function codecOf(cid: CID): CodecName {
  if (cid.code === dagCbor.code) return 'dag-cbor';
  if (cid.code === dagJson.code) return 'dag-json';
  throw new StorageError(
    'block_not_found',
    `CID ${cid} uses codec 0x${cid.code.toString(16)}, which Coffer never stores.`,
  );
}

export function encodeValue(value: unknown, codec: CodecName = 'dag-cbor'): Uint8Array {
  return CODECS[codec].encode(value);
}

export async function computeCid(bytes: Uint8Array, codec: CodecName = 'dag-cbor'): Promise<CID> {
  return CID.createV1(CODECS[codec].code, await sha256.digest(bytes));
}

/**
 * Parses a CID given as text. Anything Coffer cannot have stored (not a CID, CIDv0, another codec
 * or hash) names no block here, hence `block_not_found` with a message saying why.
 */
export function parseCid(text: string): CID {
  let cid: CID;
  try {
    cid = CID.parse(text);
  } catch (error) {
    throw new StorageError('block_not_found', `"${text.slice(0, 100)}" is not a valid CID.`, {
      cause: error,
    });
  }
  if (cid.version !== 1 || cid.multihash.code !== sha256.code) {
    throw new StorageError(
      'block_not_found',
      `CID ${cid} is not a CIDv1 with sha2-256, which is all Coffer stores.`,
    );
  }
  codecOf(cid);
  return cid;
}

/** Throws unless the bytes hash to the CID, so that altered or substituted bytes are never decoded. */
export async function verifyBlock(cid: CID, bytes: Uint8Array): Promise<void> {
  if (cid.multihash.code !== sha256.code) {
    throw new StorageError('integrity_error', `Block ${cid} uses a hash Coffer cannot verify.`);
  }
  const digest = await sha256.digest(bytes);
  if (!equals(digest.bytes, cid.multihash.bytes)) {
    throw new StorageError('integrity_error', `Block ${cid} does not match its CID: its bytes were altered.`);
  }
}

export function decodeBlock(cid: CID, bytes: Uint8Array): unknown {
  try {
    return CODECS[codecOf(cid)].decode(bytes);
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw new StorageError('integrity_error', `Block ${cid} is not valid ${codecOf(cid)}.`, { cause: error });
  }
}
