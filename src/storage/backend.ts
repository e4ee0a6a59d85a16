import type { CID } from 'multiformats/cid';

/** One stored block as a listing sees it. */
export interface ListedBlock {
  cid: CID;
  /**
   * When the block was written (fs: the file's modification time), or undefined where the
   * backend keeps no time (Kubo); garbage collection then times blocks itself.
   */
  writtenAt: Date | undefined;
}

export interface PutOptions {
  /**
   * False for a block its readers can do without (a cache of derived data): it is written without
   * waiting for the disk, so a power loss or an OS crash (not a process crash) may leave it absent
   * or torn. Readers must treat such a block as optional. Default true: complete or absent.
   */
  durable?: boolean;
}

/**
 * Where block bytes live. Backends store and return bytes only; hashing, verification and
 * decoding happen once, in the content store, so that every backend is checked alike.
 */
export interface BlockBackend {
  /** Stores the bytes under the CID; storing a block that exists already is harmless. */
  put(cid: CID, bytes: Uint8Array, options?: PutOptions): Promise<void>;
  /** The stored bytes; throws StorageError `block_not_found` when there are none. */
  get(cid: CID): Promise<Uint8Array>;
  has(cid: CID): Promise<boolean>;
  /**
   * Removes the block (a deleted credential); removing one that is absent is harmless. Kubo
   * unpins it: its bytes go at the node's next garbage collection.
   */
  remove(cid: CID): Promise<void>;
  /**
   * Every block stored (Kubo: every recursive pin), in no particular order; for garbage
   * collection and backups. A block written while the listing runs may or may not be in it.
   */
  list(): AsyncIterable<ListedBlock>;
  /** Resolves when the backend can be used; throws StorageError `backend_unavailable` otherwise. */
  check(): Promise<void>;
}
