import type { Kysely } from 'kysely';
import { isBlockReferenced } from '../db/referenced-blocks.ts';
import type { Database } from '../db/schema.ts';
import { createEmailIndex } from '../keys/blind-index.ts';
import { deriveKey } from '../keys/derive-key.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { masterKeyId } from '../keys/master-key-ring.ts';
import type { BlockContext, EncryptedStore } from '../storage/index.ts';

/**
 * One walk of a rotation over the database: what it reads with and counts. Each row is changed by compare-and-swap on the value it was read with, so
 * a concurrent change by a running server wins and the row is read again. Nothing records
 * progress: a value already under the target key is skipped, so a run after a crash continues.
 */
export interface RotationDeps {
  db: Kysely<Database>;
  /** Reads with every key of the ring, writes under the target. */
  store: EncryptedStore;
  cipher: FieldCipher;
  target: Uint8Array;
  /** Progress lines for the operator. */
  log: (line: string) => void;
  batchSize?: number;
  /** How long old blocks stay after their rows moved, for reads that already hold the old CID. */
  removalDelayMs?: number;
  now?: () => Date;
}

export interface Tally {
  reencrypted: number;
  remaining: number;
  failed: number;
}

export interface RotationReport {
  kid: string;
  dry_run: boolean;
  blocks: { reencrypted: number; remaining: number; by_kind: Record<string, Tally> };
  fields: { reencrypted: number; remaining: number; by_column: Record<string, Tally> };
  hashes: { rewritten: number; remaining: number; by_column: Record<string, Tally> };
  /** Sealed values that cannot be rewritten and expire instead (sealed-columns.ts). */
  expiring: { count: number; until: string | null };
  old_blocks_removed: number;
  failed: number;
  failures: string[];
  remaining: number;
}

export type Row = Record<string, unknown>;

export interface Walk {
  deps: RotationDeps;
  dry: boolean;
  kid: string;
  emailIndex: (email: string) => string;
  contentKey: Uint8Array;
  tally: (group: 'blocks' | 'fields' | 'hashes', name: string) => Tally;
  fail: (what: string, error: unknown) => void;
  /** CIDs whose rows now name a new block: removed at the end if no row names them. */
  retired: string[];
}

export const MAX_ATTEMPTS = 5;

export function newWalk(
  deps: RotationDeps,
  dry: boolean,
): Walk & { tallies: Map<string, Tally>; failures: string[] } {
  const tallies = new Map<string, Tally>();
  const failures: string[] = [];
  return {
    deps,
    dry,
    kid: masterKeyId(deps.target),
    emailIndex: createEmailIndex(deps.target),
    contentKey: deriveKey(deps.target, 'credential-content/v1'),
    tallies,
    failures,
    retired: [],
    tally(group, name) {
      const key = `${group}\u0000${name}`;
      let tally = tallies.get(key);
      if (!tally) {
        tally = { reencrypted: 0, remaining: 0, failed: 0 };
        tallies.set(key, tally);
      }
      return tally;
    },
    fail(what, error) {
      failures.push(`${what}: ${(error as Error)?.message ?? String(error)}`);
    },
  };
}

/** One unit of work with compare-and-swap: a false result means the row changed; it is read again. */
export async function withRetries(walk: Walk, what: string, tally: Tally, attempt: () => Promise<boolean>) {
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    try {
      if (await attempt()) return;
    } catch (error) {
      tally.failed++;
      walk.fail(what, error);
      return;
    }
  }
  tally.failed++;
  walk.fail(what, new Error('it kept changing while being rewritten; run the rotation again'));
}

export async function batches<T extends Row>(
  walk: Walk,
  label: string,
  page: (after: unknown) => Promise<T[]>,
  keyOf: (row: T) => unknown,
  each: (row: T) => Promise<void>,
) {
  let after: unknown;
  let seen = 0;
  for (;;) {
    const rows = await page(after);
    if (rows.length === 0) return;
    for (const row of rows) await each(row);
    after = keyOf(rows[rows.length - 1]!);
    seen += rows.length;
    if (!walk.dry) walk.deps.log(`${label}: ${seen} checked`);
  }
}

export const size = (walk: Walk) => walk.deps.batchSize ?? 100;

/** A block read again under the target key: its new CID (the old one is retired by the caller). */
export async function resealBlock(
  walk: Walk,
  cid: string,
  context: BlockContext,
  value?: unknown,
): Promise<string> {
  const plain = value ?? (await walk.deps.store.getEncrypted(cid, context));
  return walk.deps.store.putEncrypted(plain, context);
}

export async function dropUnused(walk: Walk, cid: string) {
  if (!(await isBlockReferenced(walk.deps.db, cid)))
    await walk.deps.store.removeEncrypted(cid).catch(() => {});
}
