import type { CID } from 'multiformats/cid';

/**
 * Where block bytes live. Backends store and return bytes only; hashing, verification and
 * decoding happen once, in the content store, so that every backend is checked alike.
 */
export interface BlockBackend {
  /** Stores the bytes under the CID; storing a block that exists already is harmless. */
  put(cid: CID, bytes: Uint8Array): Promise<void>;
  /** The stored bytes; throws StorageError `block_not_found` when there are none. */
  get(cid: CID): Promise<Uint8Array>;
  has(cid: CID): Promise<boolean>;
  /**
   * Removes the block (a deleted credential); removing one that is absent is harmless. Kubo
   * unpins it: its bytes go at the node's next garbage collection.
   */
  remove(cid: CID): Promise<void>;
  /** Resolves when the backend can be used; throws StorageError `backend_unavailable` otherwise. */
  check(): Promise<void>;
}
