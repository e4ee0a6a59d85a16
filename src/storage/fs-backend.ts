import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { access, link, mkdir, readdir, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CID } from 'multiformats/cid';
import type { BlockBackend, ListedBlock } from './backend.ts';
import { parseCid } from './cid.ts';
import { StorageError } from './errors.ts';
import { createFileSlots } from './file-slots.ts';

const TEMP_SUFFIX = '.tmp';

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function unavailable(dir: string, error: unknown): StorageError {
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new StorageError('backend_unavailable', `The block directory ${dir} cannot be used (${reason}).`, {
    cause: error,
  });
}

// A block write is nine file-system calls. fs/promises wraps each in a FileHandle and a promise
// resolved from C++, which cost the event loop more than the calls themselves (about 80 µs of
// main-thread CPU per block here, against 30 µs with the callback API).
const openFile = promisify(fs.open);
const closeFile = promisify(fs.close);
const fsyncFile = promisify(fs.fsync);
const writeFile = promisify(fs.writeFile);
const renameFile = promisify(fs.rename);
const unlinkFile = promisify(fs.unlink);
const statFile = promisify(fs.stat);
const readFileCallback = promisify(fs.readFile);

/** A directory's entries (new files, renames) are only durable once the directory itself is fsynced. */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = await openFile(dir, 'r');
  try {
    await fsyncFile(fd);
  } finally {
    await closeFile(fd);
  }
}

/** Writes a new file and fsyncs it; fails if the file exists. */
async function writeDurably(file: string, bytes: Uint8Array): Promise<void> {
  await writeFile(file, bytes, { flag: 'wx', mode: 0o600, flush: true });
}

/** The characters of CIDv1 text (multibase base32, lower case), hence of shard names. */
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const SHARD_NAMES = [...BASE32].flatMap((a) => [...BASE32].map((b) => a + b));

/** A temporary file of a block write (`<shard>/.<cid>.<uuid>.tmp`), as garbage collection sees it. */
export interface TemporaryFile {
  /** Its path below the block directory. */
  name: string;
  bytes: number;
  writtenAt: Date;
}

/** The fs backend, with what only files have: temporary files, and hard links for backups. */
export interface FsBlockBackend extends BlockBackend {
  /** Temporary files of block writes: in flight, or left behind by a crash. */
  temporaries(): AsyncIterable<TemporaryFile>;
  removeTemporary(name: string): Promise<void>;
  /** Hard-links the block's file to `target` (a backup's staging); false when it is not stored. */
  linkTo(cid: CID, target: string): Promise<boolean>;
}

const SHARD = /^[a-z2-7]{2}$/;
const TEMPORARY = /^\.[a-z2-7]+\.[0-9a-f-]{36}\.tmp$/;

/** Concurrent reads, writes and removals of blocks; each holds at most two descriptors at once. */
const FILE_SLOTS = 256;

/**
 * Blocks as files under `dir`, one file per CID, in shard directories named after the CID's
 * next-to-last two characters (as Kubo's flatfs does), so no directory grows huge. Writes go to
 * a temporary file in the shard, are fsynced and renamed into place, and the shard is fsynced:
 * after a crash a block file is either complete or absent, never torn. A block put with
 * `durable: false` skips both fsyncs: after an OS crash it may be absent or torn (backend.ts).
 */
export function createFsBackend(dir: string): FsBlockBackend {
  const inSlot = createFileSlots(FILE_SLOTS);
  async function makeDurableDir(target: string): Promise<void> {
    const first = await mkdir(target, { recursive: true, mode: 0o700 });
    let current = target;
    for (;;) {
      await fsyncDir(path.dirname(current));
      if (first === undefined || current === first || path.dirname(current) === current) break;
      current = path.dirname(current);
    }
  }

  // All 1,024 shards are made at once, on first use, and made durable by one fsync of `dir`.
  // Made one by one as blocks arrived, each new shard cost an fsync of `dir` in the write that
  // found it missing: on a new store that was most writes for the first few thousand blocks.
  let shards: Promise<void> | undefined;
  async function makeShards(): Promise<void> {
    await makeDurableDir(dir);
    await Promise.all(
      SHARD_NAMES.map((name) => mkdir(path.join(dir, name), { recursive: true, mode: 0o700 })),
    );
    await fsyncDir(dir);
  }
  function ensureShards(): Promise<void> {
    if (!shards) {
      shards = makeShards();
      shards.catch(() => {
        shards = undefined;
      });
    }
    return shards;
  }

  function locate(cid: CID): { shard: string; file: string } {
    const name = cid.toString();
    const shard = path.join(dir, name.slice(-3, -1));
    return { shard, file: path.join(shard, name) };
  }

  async function exists(file: string): Promise<boolean> {
    try {
      await statFile(file);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw unavailable(dir, error);
    }
  }

  async function touch(file: string): Promise<boolean> {
    const now = new Date();
    try {
      await utimes(file, now, now);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** The entries of every shard directory, shard by shard; nothing when no block was ever written. */
  async function* shardEntries(): AsyncGenerator<{ shard: string; name: string }> {
    let shards: string[];
    try {
      shards = (await readdir(dir)).filter((name) => SHARD.test(name)).sort();
    } catch (error) {
      if (isMissing(error)) return;
      throw unavailable(dir, error);
    }
    for (const shard of shards) {
      let names: string[];
      try {
        names = await readdir(path.join(dir, shard));
      } catch (error) {
        if (isMissing(error)) continue;
        throw unavailable(dir, error);
      }
      for (const name of names) yield { shard, name };
    }
  }

  /** The file's size and time, or undefined when it went meanwhile. */
  async function statOf(file: string): Promise<{ size: number; mtime: Date } | undefined> {
    try {
      return await stat(file);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw unavailable(dir, error);
    }
  }

  return {
    async *list(): AsyncGenerator<ListedBlock> {
      for await (const { shard, name } of shardEntries()) {
        if (name.startsWith('.')) continue;
        let cid: CID;
        try {
          cid = parseCid(name);
        } catch {
          continue; // not a block Coffer wrote: never listed, so never collected
        }
        const stats = await statOf(path.join(dir, shard, name));
        if (stats) yield { cid, writtenAt: stats.mtime };
      }
    },

    async *temporaries(): AsyncGenerator<TemporaryFile> {
      for await (const { shard, name } of shardEntries()) {
        if (!TEMPORARY.test(name)) continue;
        const stats = await statOf(path.join(dir, shard, name));
        if (stats) yield { name: path.join(shard, name), bytes: stats.size, writtenAt: stats.mtime };
      }
    },

    async removeTemporary(name) {
      const [shard, file] = name.split(path.sep);
      if (!shard || !SHARD.test(shard) || !file || !TEMPORARY.test(file)) {
        throw new TypeError(`${name} is not a temporary file of the block store`);
      }
      try {
        await unlink(path.join(dir, shard, file));
      } catch (error) {
        if (!isMissing(error)) throw unavailable(dir, error);
      }
    },

    async linkTo(cid, target) {
      try {
        await link(locate(cid).file, target);
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw unavailable(dir, error);
      }
    },

    put: (cid, bytes, options) =>
      inSlot(async () => {
        const { shard, file } = locate(cid);
        const temp = path.join(shard, `.${path.basename(file)}.${randomUUID()}${TEMP_SUFFIX}`);
        try {
          await ensureShards();
          if (options?.durable === false) {
            // Four calls instead of nine, no fsync: a block its readers can do without. Renamed
            // over a copy already there, it is the same bytes with a new time for garbage collection.
            await writeFile(temp, bytes, { flag: 'wx', mode: 0o600 });
            await renameFile(temp, file);
            return;
          }
          // Whether the block is there already is asked while the temporary file is written, not
          // before: both wait for the disk, and a stat queued behind other requests' fsyncs took
          // milliseconds. A block that exists is left as it is and the temporary file removed.
          const [present] = await Promise.all([exists(file), writeDurably(temp, bytes)]);
          // A block written again counts as new for garbage collection, whose grace period is
          // measured from the file's time; gone meanwhile, it is written as if it never was.
          if (present && (await touch(file))) {
            await unlinkFile(temp);
            return;
          }
          // Concurrent writers of the same block rename identical bytes over each other, which is harmless.
          await renameFile(temp, file);
          await fsyncDir(shard);
        } catch (error) {
          await unlinkFile(temp).catch(() => {});
          throw error instanceof StorageError ? error : unavailable(dir, error);
        }
      }),

    get: (cid) =>
      inSlot(async () => {
        try {
          return new Uint8Array(await readFileCallback(locate(cid).file));
        } catch (error) {
          if (isMissing(error)) throw new StorageError('block_not_found', `Block ${cid} is not stored.`);
          throw unavailable(dir, error);
        }
      }),

    has(cid) {
      return exists(locate(cid).file);
    },

    remove: (cid) =>
      inSlot(async () => {
        const { shard, file } = locate(cid);
        try {
          await unlinkFile(file);
          await fsyncDir(shard);
        } catch (error) {
          if (!isMissing(error)) throw unavailable(dir, error);
        }
      }),

    async check() {
      try {
        await makeDurableDir(dir);
        await access(dir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
      } catch (error) {
        throw unavailable(dir, error);
      }
    },
  };
}
