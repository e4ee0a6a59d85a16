import { createHash } from 'node:crypto';

/** The hash before the first position: nothing precedes it. */
export const GENESIS_HASH = '0'.repeat(64);

/** The columns a position's hash covers (every column but the hash itself). */
export interface ChainedRow {
  id: number;
  occurred_at: string;
  client_id: number | null;
  actor: string;
  event_type: string;
  targets: string;
  outcome: string;
  reason: string | null;
  request_id: string | null;
}

/**
 * sha256(prev_hash ‖ canonical row). The canonical row is a JSON array in a fixed order and
 * includes the position, so moving a row to another position breaks the chain as editing does.
 */
export function chainHash(prevHash: string, seq: number, row: ChainedRow): string {
  const canonical = JSON.stringify([
    seq,
    row.id,
    row.occurred_at,
    row.client_id,
    row.actor,
    row.event_type,
    row.targets,
    row.outcome,
    row.reason,
    row.request_id,
  ]);
  return createHash('sha256').update(prevHash).update(canonical).digest('hex');
}
