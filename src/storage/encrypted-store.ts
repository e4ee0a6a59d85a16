import path from 'node:path';
import type { BlockBackend } from './backend.ts';
import { parseCid } from './cid.ts';
import { createContentStore } from './content-store.ts';
import { type BlockContext, createEnvelopeCipher } from './envelope.ts';
import { createFsBackend } from './fs-backend.ts';
import { createKuboBackend } from './kubo-backend.ts';

/**
 * Personal data at rest: every value is sealed into an envelope before it becomes a block, so
 * neither the block files nor a Kubo node ever see plaintext. The CID names the envelope, so it
 * changes on every write of the same value (fresh IV), and says nothing about the plaintext.
 */
export interface EncryptedStore {
  putEncrypted(value: unknown, context: BlockContext): Promise<string>;
  getEncrypted(cid: string, context: BlockContext): Promise<unknown>;
  /** Readiness: the backend is reachable (for GET /readyz). */
  check(): Promise<void>;
}

export interface EncryptedStoreOptions {
  backend: 'fs' | 'kubo';
  /** fs blocks live in `<dataDir>/blocks`. */
  dataDir: string;
  kuboApiUrl?: string;
  masterKey: Uint8Array;
}

function createBackend(options: EncryptedStoreOptions): BlockBackend {
  if (options.backend === 'fs') return createFsBackend(path.join(options.dataDir, 'blocks'));
  if (!options.kuboApiUrl) throw new TypeError('kuboApiUrl is required when the storage backend is "kubo"');
  return createKuboBackend(options.kuboApiUrl);
}

export function createEncryptedStore(options: EncryptedStoreOptions): EncryptedStore {
  const cipher = createEnvelopeCipher(options.masterKey);
  const store = createContentStore(createBackend(options));
  return {
    async putEncrypted(value, context) {
      const cid = await store.put(cipher.seal(value, context));
      return cid.toString();
    },

    async getEncrypted(cid, context) {
      return cipher.open(await store.get(parseCid(cid)), context);
    },

    check() {
      return store.check();
    },
  };
}
