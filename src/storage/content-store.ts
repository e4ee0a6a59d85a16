import type { CID } from 'multiformats/cid';
import type { BlockBackend, PutOptions } from './backend.ts';
import { type CodecName, computeCid, decodeBlock, encodeValue, parseCid, verifyBlock } from './cid.ts';

/** IPLD values in, CIDs out; reading checks that the bytes hash to the CID before decoding them. */
export interface ContentStore {
  put(value: unknown, codec?: CodecName, options?: PutOptions): Promise<CID>;
  get(cid: CID | string): Promise<unknown>;
  check(): Promise<void>;
  remove(cid: CID | string): Promise<void>;
}

export function createContentStore(backend: BlockBackend): ContentStore {
  return {
    async put(value, codec = 'dag-cbor', options) {
      const bytes = encodeValue(value, codec);
      const cid = await computeCid(bytes, codec);
      await backend.put(cid, bytes, options);
      return cid;
    },

    async get(cidOrText) {
      const cid = typeof cidOrText === 'string' ? parseCid(cidOrText) : cidOrText;
      const bytes = await backend.get(cid);
      await verifyBlock(cid, bytes);
      return decodeBlock(cid, bytes);
    },

    check() {
      return backend.check();
    },

    remove(cidOrText) {
      return backend.remove(typeof cidOrText === 'string' ? parseCid(cidOrText) : cidOrText);
    },
  };
}
