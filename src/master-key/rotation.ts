import { removeRetired, walkCopies, walkCredentials, walkPrepared, walkUsers } from './block-walks.ts';
import { SEALED_COLUMNS } from './sealed-columns.ts';
import { countExpiring, walkIssuanceAuthorizations, walkSealed } from './sealed-walks.ts';
import { newWalk, type RotationDeps, type RotationReport, type Tally, type Walk } from './walk.ts';

export type { RotationDeps, RotationReport, Tally } from './walk.ts';

/**
 * `coffer master-key rotate` (docs/operations.md, "Master-key rotation"): every block a row names
 * and every sealed value is rewritten under the target key, and the keyed hashes are recomputed
 * with it (walk.ts says how a row is changed safely beside a running server). The files here:
 * block-walks.ts (profiles, credentials, prepared statements, copies, the old blocks),
 * sealed-walks.ts and sealed-columns.ts (every sealed column), this one (order and report).
 */
export async function rotateMasterKey(deps: RotationDeps, dryRun: boolean): Promise<RotationReport> {
  const walk = newWalk(deps, dryRun);
  await walkEverything(walk);
  const removed = dryRun ? 0 : await removeRetired(walk);
  // What is left is counted again, as --dry-run would: a value written meanwhile under an old key
  // (a server not restarted yet) or one that failed.
  const left = dryRun ? walk : newWalk({ ...deps, log: () => {} }, true);
  if (!dryRun) await walkEverything(left);
  const expiring = await countExpiring(walk);
  return report(walk, left, expiring, removed);
}

async function walkEverything(walk: Walk): Promise<void> {
  await walkUsers(walk);
  await walkCredentials(walk);
  await walkPrepared(walk);
  await walkCopies(walk);
  for (const column of SEALED_COLUMNS) await walkSealed(walk, column);
  await walkIssuanceAuthorizations(walk);
}

// ---- the report ------------------------------------------------------------------------------------

function report(
  done: Walk & { tallies: Map<string, Tally>; failures: string[] },
  left: Walk & { tallies: Map<string, Tally> },
  expiring: { count: number; until: string | null },
  removed: number,
): RotationReport {
  const groups = { blocks: {} as Record<string, Tally>, fields: {}, hashes: {} } as Record<
    'blocks' | 'fields' | 'hashes',
    Record<string, Tally>
  >;
  for (const [key, tally] of done.tallies) {
    const [group, name] = key.split('\u0000') as ['blocks' | 'fields' | 'hashes', string];
    const remaining = left.tallies.get(key)?.remaining ?? 0;
    groups[group][name] = { reencrypted: tally.reencrypted, remaining, failed: tally.failed };
  }
  const sum = (group: Record<string, Tally>, field: keyof Tally) =>
    Object.values(group).reduce((total, tally) => total + tally[field], 0);
  const remaining =
    sum(groups.blocks, 'remaining') +
    sum(groups.fields, 'remaining') +
    sum(groups.hashes, 'remaining') +
    expiring.count;
  return {
    kid: done.kid,
    dry_run: done.dry,
    blocks: {
      reencrypted: sum(groups.blocks, 'reencrypted'),
      remaining: sum(groups.blocks, 'remaining'),
      by_kind: groups.blocks,
    },
    fields: {
      reencrypted: sum(groups.fields, 'reencrypted'),
      remaining: sum(groups.fields, 'remaining'),
      by_column: groups.fields,
    },
    hashes: {
      rewritten: sum(groups.hashes, 'reencrypted'),
      remaining: sum(groups.hashes, 'remaining'),
      by_column: groups.hashes,
    },
    expiring,
    old_blocks_removed: removed,
    failed: sum(groups.blocks, 'failed') + sum(groups.fields, 'failed') + sum(groups.hashes, 'failed'),
    failures: done.failures.slice(0, 20),
    remaining,
  };
}
