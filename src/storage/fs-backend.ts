import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { CID } from 'multiformats/cid';
import type { BlockBackend } from './backend.ts';
import { StorageError } from './errors.ts';

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

/** A directory's entries (new files, renames) are only durable once the directory itself is fsynced. */
async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Blocks as files under `dir`, one file per CID, in shard directories named after the CID's
 * next-to-last two characters (as Kubo's flatfs does), so no directory grows huge. Writes go to
 * a temporary file in the shard, are fsynced and renamed into place, and the shard is fsynced:
 * after a crash a block file is either complete or absent, never torn.
 */
export function createFsBackend(dir: string): BlockBackend {
  // A shard made by this process (or a concurrent one) is durable only once its parent is fsynced;
  // doing that once per shard and process keeps later writes to one fsync of the shard.
  const shards = new Map<string, Promise<void>>();

  async function makeDurableDir(target: string): Promise<void> {
    const first = await mkdir(target, { recursive: true, mode: 0o700 });
    let current = target;
    for (;;) {
      await fsyncDir(path.dirname(current));
      if (first === undefined || current === first || path.dirname(current) === current) break;
      current = path.dirname(current);
    }
  }

  function ensureShard(shard: string): Promise<void> {
    let ready = shards.get(shard);
    if (!ready) {
      ready = makeDurableDir(shard);
      ready.catch(() => shards.delete(shard));
      shards.set(shard, ready);
    }
    return ready;
  }

  function locate(cid: CID): { shard: string; file: string } {
    const name = cid.toString();
    const shard = path.join(dir, name.slice(-3, -1));
    return { shard, file: path.join(shard, name) };
  }

  async function exists(file: string): Promise<boolean> {
    try {
      await stat(file);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw unavailable(dir, error);
    }
  }

  return {
    async put(cid, bytes) {
      const { shard, file } = locate(cid);
      if (await exists(file)) return;
      const temp = path.join(shard, `.${path.basename(file)}.${randomUUID()}${TEMP_SUFFIX}`);
      try {
        await ensureShard(shard);
        const handle = await open(temp, 'wx', 0o600);
        try {
          await handle.writeFile(bytes);
          await handle.sync();
        } finally {
          await handle.close();
        }
        // Concurrent writers of the same block rename identical bytes over each other, which is harmless.
        await rename(temp, file);
        await fsyncDir(shard);
      } catch (error) {
        await unlink(temp).catch(() => {});
        throw error instanceof StorageError ? error : unavailable(dir, error);
      }
    },

    async get(cid) {
      try {
        return new Uint8Array(await readFile(locate(cid).file));
      } catch (error) {
        if (isMissing(error)) throw new StorageError('block_not_found', `Block ${cid} is not stored.`);
        throw unavailable(dir, error);
      }
    },

    has(cid) {
      return exists(locate(cid).file);
    },

    async check() {
      try {
        await makeDurableDir(dir);
        await access(dir, constants.R_OK | constants.W_OK | constants.X_OK);
      } catch (error) {
        throw unavailable(dir, error);
      }
    },
  };
}
