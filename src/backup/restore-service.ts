import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { CofferError } from '../errors.ts';
import { type BlockBackend, fsyncDir, parseCid, verifyBlock } from '../storage/index.ts';
import { ARCHIVE_VERSION, archiveError, MAX_BLOCK_BYTES, openArchive } from './archive.ts';
import type { BackupManifest } from './backup-service.ts';

/** What a DATA_DIR may hold before a restore: the operator's copy of the master keys, nothing else. */
const ALLOWED_BEFORE_RESTORE = new Set(['master.key', 'master.key.previous']);
const DATABASE_FILE = 'coffer.sqlite';

export interface RestoreDeps {
  dataDir: string;
  /** The database the configuration names: a SQLite file in DATA_DIR, or PostgreSQL. */
  database: 'sqlite' | 'postgres';
  /** Where the blocks go, given the staging directory (fs: its `blocks`, renamed into place at the end). */
  blockBackend(staging: string): BlockBackend;
  /** Whether blocks are staged under the staging directory and moved into DATA_DIR at the end (fs). */
  stagesBlocks: boolean;
  /** The block-key id of the MASTER_KEY the restored service will run with. */
  keyId: string;
  /** Every key id its ring reads (MASTER_KEY_PREVIOUS too); keyId alone when absent. */
  readableKeyIds?: string[];
}

export interface RestoreReport {
  blocks: number;
  block_bytes: number;
  database: 'sqlite' | null;
  key_id: string;
  created_at: string;
  /** Referenced blocks the backup could not take (absent or damaged in the store then). */
  missing: string[];
}

async function checkEmpty(dataDir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const present = entries.filter((name) => !ALLOWED_BEFORE_RESTORE.has(name));
  if (present.length > 0) {
    throw new CofferError(
      'conflict',
      `DATA_DIR ${dataDir} is not empty (it holds ${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}): restore only fills an empty directory, so that nothing is overwritten or mixed.`,
    );
  }
}

function readManifest(bytes: Buffer, file: string): BackupManifest {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(bytes.toString('utf8')) as BackupManifest;
  } catch {
    throw archiveError(`${file} is damaged: its manifest is not JSON.`);
  }
  if (manifest?.format !== 'coffer-backup' || manifest.version !== ARCHIVE_VERSION) {
    throw archiveError(`${file} does not hold a Coffer backup manifest of format ${ARCHIVE_VERSION}.`);
  }
  return manifest;
}

/**
 * Fills an empty DATA_DIR from an archive: the key is checked against the manifest before
 * anything is written, every block must hash to its CID, the database must match the archive's
 * checksum and pass SQLite's check, and only then are the staged files renamed into place, so a
 * failed restore leaves DATA_DIR as empty as it found it (Kubo keeps any block already put).
 */
export async function restoreBackup(deps: RestoreDeps, from: string): Promise<RestoreReport> {
  await checkEmpty(deps.dataDir);
  const archive = await openArchive(from);
  await mkdir(deps.dataDir, { recursive: true, mode: 0o700 });
  const staging = path.join(deps.dataDir, `.restore-${randomUUID()}`);
  try {
    const first = await archive.next();
    if (first?.kind !== 'M') throw archiveError(`${from} is damaged: it does not begin with its manifest.`);
    const manifest = readManifest(await archive.data(), from);
    // A backup taken mid-rotation needs every key its blocks were sealed under.
    const readable = new Set(deps.readableKeyIds ?? [deps.keyId]);
    const needed = manifest.block_key_ids?.length ? manifest.block_key_ids : [manifest.key_id];
    const lacking = needed.filter((kid) => !readable.has(kid));
    if (lacking.length > 0) {
      throw new CofferError(
        'invalid_request',
        `This backup was taken under the master key with id ${lacking.join(', ')}, but MASTER_KEY here has id ${[...readable].join(', ')}: restore with the master key the backup was taken with (it is never inside a backup).`,
      );
    }
    if (manifest.database === 'sqlite' && deps.database === 'postgres') {
      throw new CofferError(
        'invalid_request',
        'This backup holds a SQLite database, but DATABASE_URL names PostgreSQL: unset DATABASE_URL to restore it.',
      );
    }
    await mkdir(path.join(staging, 'blocks'), { recursive: true, mode: 0o700 });
    const backend = deps.blockBackend(staging);
    let blocks = 0;
    let blockBytes = 0;
    let database = false;
    for (let record = await archive.next(); record; record = await archive.next()) {
      if (record.kind === 'B') {
        if (record.length > MAX_BLOCK_BYTES)
          throw archiveError(`${from} is damaged: block ${record.name} is too large.`);
        const bytes = new Uint8Array(await archive.data());
        let cid: ReturnType<typeof parseCid>;
        try {
          cid = parseCid(record.name);
          await verifyBlock(cid, bytes);
        } catch {
          throw archiveError(`${from} is damaged: block ${record.name} does not hash to its CID.`);
        }
        await backend.put(cid, bytes);
        blocks++;
        blockBytes += bytes.length;
      } else if (record.kind === 'D' && !database && manifest.database === 'sqlite') {
        const file = await open(path.join(staging, DATABASE_FILE), 'wx', 0o600);
        try {
          for await (const chunk of archive.chunks()) await file.write(chunk);
          await file.sync();
        } finally {
          await file.close();
        }
        database = true;
      } else {
        throw archiveError(`${from} is damaged: an unexpected ${record.kind} record (${record.name}).`);
      }
    }
    if (blocks !== manifest.blocks || (manifest.database === 'sqlite') !== database) {
      throw archiveError(`${from} is damaged: it does not hold what its manifest lists.`);
    }
    if (database) {
      const db = new DatabaseSync(path.join(staging, DATABASE_FILE));
      try {
        const [check] = db.prepare('PRAGMA quick_check').all() as Array<{ quick_check: string }>;
        if (check?.quick_check !== 'ok') throw archiveError(`${from} holds a damaged database.`);
      } finally {
        db.close();
      }
      await rm(path.join(staging, `${DATABASE_FILE}-journal`), { force: true });
    }

    // Into place: blocks first, the database last (the server starts from the database).
    if (deps.stagesBlocks) {
      await fsyncDir(path.join(staging, 'blocks'));
      await rename(path.join(staging, 'blocks'), path.join(deps.dataDir, 'blocks'));
    }
    if (database) await rename(path.join(staging, DATABASE_FILE), path.join(deps.dataDir, DATABASE_FILE));
    await fsyncDir(deps.dataDir);
    return {
      blocks,
      block_bytes: blockBytes,
      database: database ? 'sqlite' : null,
      key_id: manifest.key_id,
      created_at: manifest.created_at,
      missing: manifest.missing,
    };
  } finally {
    await archive.close();
    await rm(staging, { recursive: true, force: true });
  }
}
