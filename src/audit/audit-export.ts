import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { ChainedRow } from './audit-chain.ts';

/** One row as exported and as `GET /v1/audit` shows it. */
export interface AuditRecord {
  id: number;
  time: string;
  client_id: number | null;
  actor: string;
  type: string;
  targets: Record<string, string | number>;
  outcome: 'success' | 'failure';
  reason: string | null;
  request_id: string | null;
  chain_seq: number | null;
  hash: string | null;
}

export function presentAuditRow(
  row: ChainedRow & {
    chain_seq: string | number | null;
    hash: string | null;
  },
): AuditRecord {
  return {
    id: row.id,
    time: row.occurred_at,
    client_id: row.client_id,
    actor: row.actor,
    type: row.event_type,
    targets: JSON.parse(row.targets) as Record<string, string | number>,
    outcome: row.outcome === 'failure' ? 'failure' : 'success',
    reason: row.reason,
    request_id: row.request_id,
    chain_seq: row.chain_seq === null ? null : Number(row.chain_seq),
    hash: row.hash,
  };
}

/** Every event since `since` (by time), oldest first, a page at a time, to `write`. */
export async function exportAuditEvents(
  db: Kysely<Database>,
  since: Date,
  write: (record: AuditRecord) => void,
): Promise<number> {
  let after = 0;
  let count = 0;
  for (;;) {
    const rows = await db
      .selectFrom('audit_events')
      .selectAll()
      .where('occurred_at', '>=', since.toISOString())
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    for (const row of rows) write(presentAuditRow(row));
    count += rows.length;
    if (rows.length < 1000) return count;
    after = rows.at(-1)!.id;
  }
}
