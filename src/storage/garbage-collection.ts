import type { CID } from 'multiformats/cid';
import type { BlockBackend } from './backend.ts';
import { envelopeKeyId } from './envelope.ts';
import { StorageError } from './errors.ts';
import type { TemporaryFile } from './fs-backend.ts';

/**
 * When each unreferenced block was first seen by a collection, for backends that keep no write
 * time (Kubo): such a block is removed only once a later collection, at least the grace period
 * after, still finds it unreferenced (db/unreferenced-blocks.ts keeps them in the database).
 */
export interface UnreferencedSightings {
  read(): Promise<Map<string, Date>>;
  record(cids: string[], at: Date): Promise<void>;
  forget(cids: string[]): Promise<void>;
}

export interface CollectionDeps {
  backend: Pick<BlockBackend, 'list' | 'get' | 'remove'>;
  /** Every CID a row names (db/referenced-blocks.ts), read after the listing. */
  referencedCids(): Promise<ReadonlySet<string>>;
  now(): Date;
  /** Needed when the backend lists blocks without a write time. */
  sightings?: UnreferencedSightings;
  /** The fs backend's temporary files, removed once older than the grace period. */
  temporaries?: {
    list(): AsyncIterable<TemporaryFile>;
    remove(name: string): Promise<void>;
  };
}

export interface CollectionOptions {
  graceSeconds: number;
  /** Count what would go, change nothing (not even the sightings). */
  dryRun: boolean;
}

export interface CollectionReport {
  /** Unreferenced blocks removed (or, in a dry run, that would be). */
  removed: number;
  bytes: number;
  /** Unreferenced blocks kept because they are younger than the grace period (or not yet timed). */
  young: number;
  /** Unreferenced blocks that are not Coffer envelopes (another application's pins): left alone. */
  foreign: number;
  temporary_files: number;
  temporary_bytes: number;
}

/**
 * Removes the blocks no row names and that are older than the grace period. The order is what
 * makes it safe beside a running server, which writes a block and then commits the row naming
 * it: the blocks are listed first, the clock is read, and only then the referenced CIDs. A block
 * older than the grace at that moment was written before it, so a row about to name it has
 * committed by the time the CIDs are read (as long as no write takes longer than the grace); a
 * block written after the listing is not in it and so never touched.
 */
export async function collectGarbage(
  deps: CollectionDeps,
  options: CollectionOptions,
): Promise<CollectionReport> {
  const graceMs = options.graceSeconds * 1000;
  const report: CollectionReport = {
    removed: 0,
    bytes: 0,
    young: 0,
    foreign: 0,
    temporary_files: 0,
    temporary_bytes: 0,
  };
  const startedAt = deps.now().getTime();
  const old: CID[] = [];
  const untimed: CID[] = [];
  let youngTimed: CID[] = [];
  for await (const { cid, writtenAt } of deps.backend.list()) {
    if (writtenAt === undefined) untimed.push(cid);
    else if (writtenAt.getTime() <= startedAt - graceMs) old.push(cid);
    else youngTimed.push(cid);
  }
  // Read after the listing: a block pinned while it ran is seen at this time or later.
  const seenAt = deps.now();
  const referenced = await deps.referencedCids();
  const unreferenced = (cid: CID) => !referenced.has(cid.toString());
  youngTimed = youngTimed.filter(unreferenced);
  report.young += youngTimed.length;

  const candidates = old.filter(unreferenced);
  const firstSightings: string[] = [];
  const settled: string[] = [];
  if (untimed.length > 0) {
    if (!deps.sightings) throw new TypeError('a backend without write times needs sightings');
    const sightings = await deps.sightings.read();
    const listed = new Set(untimed.map(String));
    for (const cid of untimed.filter(unreferenced)) {
      const first = sightings.get(cid.toString());
      if (first === undefined) {
        firstSightings.push(cid.toString());
        report.young++;
      } else if (first.getTime() <= seenAt.getTime() - graceMs) candidates.push(cid);
      else report.young++;
    }
    // Sightings of blocks since referenced or gone are of no use any more.
    for (const cid of sightings.keys()) if (referenced.has(cid) || !listed.has(cid)) settled.push(cid);
  }

  const removed: string[] = [];
  for (const cid of candidates) {
    let bytes: Uint8Array;
    try {
      bytes = await deps.backend.get(cid);
    } catch (error) {
      if (error instanceof StorageError && error.code === 'block_not_found') continue; // gone meanwhile
      throw error;
    }
    if (envelopeKeyId(bytes) === undefined) {
      report.foreign++;
      continue;
    }
    if (!options.dryRun) await deps.backend.remove(cid);
    removed.push(cid.toString());
    report.removed++;
    report.bytes += bytes.length;
  }

  if (deps.temporaries) {
    for await (const temporary of deps.temporaries.list()) {
      if (temporary.writtenAt.getTime() > startedAt - graceMs) continue;
      if (!options.dryRun) await deps.temporaries.remove(temporary.name);
      report.temporary_files++;
      report.temporary_bytes += temporary.bytes;
    }
  }

  if (!options.dryRun && deps.sightings && untimed.length > 0) {
    await deps.sightings.forget([...settled, ...removed]);
    await deps.sightings.record(firstSightings, seenAt);
  }
  return report;
}
