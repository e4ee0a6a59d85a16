import { randomUUID } from 'node:crypto';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DatabaseSync, backup as sqliteBackup } from 'node:sqlite';
import type { CID } from 'multiformats/cid';
import { CACHE_BLOCKS_SQL, REFERENCED_BLOCKS_SQL } from '../db/referenced-blocks.ts';
import { CofferError } from '../errors.ts';
import { type BlockBackend, envelopeKeyId, parseCid, StorageError, verifyBlock } from '../storage/index.ts';
import { ARCHIVE_VERSION, createArchive } from './archive.ts';

/** The archive's first record: what it holds, and the id (never the value) of the key it needs. */
export interface BackupManifest {
  format: 'coffer-backup';
  version: number;
  created_at: string;
  /** 'sqlite' when the archive holds the database, null for --blocks-only. */
  database: 'sqlite' | null;
  /** The block-key id of the MASTER_KEY the backup was taken with (storage/envelope.ts). */
  key_id: string;
  /** Every key id found on the archived blocks. */
  block_key_ids: string[];
  blocks: number;
  block_bytes: number;
  /** Referenced blocks that were absent or damaged in the store when the backup was taken. */
  missing: string[];
}

export interface BackupDeps {
  backend: BlockBackend;
  /** The fs backend's hard links; without them (Kubo) blocks are copied into the staging directory. */
  linkTo?: (cid: CID, target: string) => Promise<boolean>;
  /** The SQLite database file, or undefined for blocks only (PostgreSQL: pg_dump takes the database). */
  sqliteFile: string | undefined;
  /** Where the staging directory goes: DATA_DIR, so that hard links stay on one file system. */
  dataDir: string;
  keyId: string;
  /** Every key id the configured ring reads (MASTER_KEY and MASTER_KEY_PREVIOUS); keyId alone when absent. */
  readableKeyIds?: string[];
  now(): Date;
}

export interface BackupReport {
  file: string;
  bytes: number;
  database: 'sqlite' | null;
  blocks: number;
  block_bytes: number;
  missing: string[];
  key_id: string;
}

/** A read-only view of the snapshot on its own connection: the CIDs its rows name. */
function snapshotReferences(file: string): { all: string[]; caches: Set<string> } {
  const db = new DatabaseSync(file);
  try {
    // The snapshot is a lone file from now on: no WAL beside it.
    db.exec('PRAGMA journal_mode = DELETE');
    const cids = (query: string) => (db.prepare(query).all() as Array<{ cid: string }>).map((row) => row.cid);
    return { all: cids(REFERENCED_BLOCKS_SQL), caches: new Set(cids(CACHE_BLOCKS_SQL)) };
  } finally {
    db.close();
  }
}

/**
 * A backup while the server runs. Blocks never change once written, so: every block present is
 * hard-linked (or copied) into a staging directory first, then the database is snapshotted
 * (SQLite's online backup, in one step, so one read transaction), then any block the snapshot
 * names that was written in between is staged too; the archive holds the snapshot and exactly
 * the blocks it names. A block deleted after staging is still in the staging directory, so the
 * snapshot never names a block the archive lacks unless the store had lost it already (`missing`).
 * With blocks only (PostgreSQL) every Coffer block present is archived, orphans included, since
 * the database snapshot (pg_dump) is taken apart from it.
 */
export async function takeBackup(deps: BackupDeps, out: string): Promise<BackupReport> {
  if (deps.sqliteFile) {
    // node:sqlite would create an empty database where none is: a wrong DATA_DIR, not a backup.
    await access(deps.sqliteFile).catch(() => {
      throw new CofferError('not_found', `There is no database at ${deps.sqliteFile}: is DATA_DIR right?`);
    });
  }
  const staging = path.join(deps.dataDir, `backup-staging-${randomUUID()}`);
  const stagedFile = (cid: string) => path.join(staging, 'blocks', cid);
  await mkdir(path.join(staging, 'blocks'), { recursive: true, mode: 0o700 });
  try {
    const stage = async (cid: CID): Promise<boolean> => {
      if (deps.linkTo) return deps.linkTo(cid, stagedFile(cid.toString()));
      try {
        await writeFile(stagedFile(cid.toString()), await deps.backend.get(cid), { mode: 0o600 });
        return true;
      } catch (error) {
        if (error instanceof StorageError && error.code === 'block_not_found') return false;
        throw error;
      }
    };
    const staged = new Set<string>();
    for await (const { cid } of deps.backend.list()) if (await stage(cid)) staged.add(cid.toString());

    let wanted: string[];
    // A cache block lost to an OS crash is not a loss: left out without a warning.
    let caches = new Set<string>();
    const snapshot = path.join(staging, 'coffer.sqlite');
    if (deps.sqliteFile) {
      const source = new DatabaseSync(deps.sqliteFile);
      try {
        source.exec('PRAGMA busy_timeout = 5000');
        // One step copies every page inside one read transaction: a consistent snapshot that a
        // concurrent writer (the server) neither blocks nor restarts.
        await sqliteBackup(source, snapshot, { rate: 2 ** 31 - 1 });
      } finally {
        source.close();
      }
      const references = snapshotReferences(snapshot);
      wanted = [...new Set(references.all)];
      caches = references.caches;
    } else {
      wanted = [...staged];
    }

    const missing: string[] = [];
    // Names and sizes only: the bytes are read again from the staging directory as they are archived.
    const archived: Array<{ cid: string; size: number }> = [];
    const keyIds = new Set<string>();
    for (const text of wanted.sort()) {
      let cid: CID;
      try {
        cid = parseCid(text);
      } catch {
        missing.push(text);
        continue;
      }
      // Written between the listing and the snapshot.
      if (!staged.has(text) && !(await stage(cid))) {
        if (!caches.has(text)) missing.push(text);
        continue;
      }
      const bytes = new Uint8Array(await readFile(stagedFile(text)));
      try {
        await verifyBlock(cid, bytes);
      } catch {
        if (!caches.has(text)) missing.push(text);
        continue;
      }
      const kid = envelopeKeyId(bytes);
      // Blocks only: a pin of another application on a shared Kubo node is not Coffer's to keep.
      if (!kid && !deps.sqliteFile) continue;
      if (kid) keyIds.add(kid);
      archived.push({ cid: text, size: bytes.length });
    }
    // Mid-rotation blocks are under the old and the new key: each must be one the ring reads.
    const readable = new Set(deps.readableKeyIds ?? [deps.keyId]);
    const unreadable = [...keyIds].filter((kid) => !readable.has(kid));
    if (unreadable.length > 0) {
      throw new CofferError(
        'invalid_request',
        `Blocks are encrypted under key ${unreadable.join(', ')}, which this configuration does not hold (its keys: ${[...readable].join(', ')}): run coffer backup with the server's MASTER_KEY and MASTER_KEY_PREVIOUS.`,
      );
    }

    const manifest: BackupManifest = {
      format: 'coffer-backup',
      version: ARCHIVE_VERSION,
      created_at: deps.now().toISOString(),
      database: deps.sqliteFile ? 'sqlite' : null,
      key_id: deps.keyId,
      block_key_ids: [...keyIds].sort(),
      blocks: archived.length,
      block_bytes: archived.reduce((sum, block) => sum + block.size, 0),
      missing,
    };
    const archive = await createArchive(out);
    try {
      await archive.add('M', 'manifest.json', Buffer.from(JSON.stringify(manifest), 'utf8'));
      for (const { cid } of archived) await archive.add('B', cid, await readFile(stagedFile(cid)));
      if (deps.sqliteFile) await archive.addFile('D', 'coffer.sqlite', snapshot);
      const { bytes } = await archive.finish();
      return {
        file: out,
        bytes,
        database: manifest.database,
        blocks: manifest.blocks,
        block_bytes: manifest.block_bytes,
        missing,
        key_id: deps.keyId,
      };
    } catch (error) {
      await archive.abort();
      throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
