import path from 'node:path';
import type { MasterKeyRing } from '../keys/master-key-ring.ts';
import type { BlockBackend, PutOptions } from './backend.ts';
import { parseCid } from './cid.ts';
import { createContentStore } from './content-store.ts';
import { type BlockContext, createEnvelopeCipher, type Envelope } from './envelope.ts';
import { createFsBackend } from './fs-backend.ts';
import { createKuboBackend } from './kubo-backend.ts';
import { createValueCache } from './value-cache.ts';

/**
 * Personal data at rest: every value is sealed into an envelope before it becomes a block, so
 * neither the block files nor a Kubo node ever see plaintext. The CID names the envelope, so it
 * changes on every write of the same value (fresh IV), and says nothing about the plaintext.
 */
export interface EncryptedStore {
  /** `{ durable: false }` for a block its readers can do without (backend.ts, PutOptions). */
  putEncrypted(value: unknown, context: BlockContext, options?: PutOptions): Promise<string>;
  getEncrypted(cid: string, context: BlockContext): Promise<unknown>;
  /** Removes the block and forgets its decrypted value (a deleted credential). */
  removeEncrypted(cid: string): Promise<void>;
  /** Readiness: the backend is reachable (for GET /readyz). */
  check(): Promise<void>;
  /** The master key id the block was sealed under (read without decrypting), for key rotation. */
  kidOf(cid: string): Promise<string>;
  /** The key id new blocks are sealed under. */
  readonly kid: string;
}

export interface EncryptedStoreOptions {
  backend: 'fs' | 'kubo';
  /** fs blocks live in `<dataDir>/blocks`. */
  dataDir: string;
  kuboApiUrl?: string;
  /** The key, or the ring (current and previous keys) from keys/master-key-ring.ts. */
  masterKey: Uint8Array | MasterKeyRing;
  /** Bytes of decrypted values kept in memory (BLOCK_CACHE_MB); 0 or absent keeps none. */
  cacheBytes?: number;
}

/** Where blocks go: what a block backend needs of the store's options. */
export type BlockBackendOptions = Pick<EncryptedStoreOptions, 'backend' | 'dataDir' | 'kuboApiUrl'>;

/** The backend the options name (the CLI's garbage collection and backups use it directly). */
export function createBlockBackend(options: BlockBackendOptions): BlockBackend {
  if (options.backend === 'fs') return createFsBackend(path.join(options.dataDir, 'blocks'));
  if (!options.kuboApiUrl) throw new TypeError('kuboApiUrl is required when the storage backend is "kubo"');
  return createKuboBackend(options.kuboApiUrl);
}

export function createEncryptedStore(options: EncryptedStoreOptions): EncryptedStore {
  const cipher = createEnvelopeCipher(options.masterKey);
  const store = createContentStore(createBlockBackend(options));
  const cache = createValueCache(options.cacheBytes ?? 0);
  return {
    async putEncrypted(value, context, options) {
      const cid = await store.put(cipher.seal(value, context), 'dag-cbor', options);
      return cid.toString();
    },

    async getEncrypted(cid, context) {
      // The context is part of the key: a value is only ever served to the owner and kind it
      // was sealed for, as the envelope's associated data demands.
      const key = `${cid}\u0000${context.owner}\u0000${context.kind}`;
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const envelope = (await store.get(parseCid(cid))) as Envelope;
      const value = cipher.open(envelope, context);
      cache.set(key, value, envelope.ct.length);
      return value;
    },

    async removeEncrypted(cid) {
      cache.forget(`${cid}\u0000`);
      await store.remove(parseCid(cid));
    },

    check() {
      return store.check();
    },

    async kidOf(cid) {
      const envelope = (await store.get(parseCid(cid))) as Partial<Envelope> | null;
      return typeof envelope?.kid === 'string' ? envelope.kid : '';
    },

    kid: cipher.kid,
  };
}
