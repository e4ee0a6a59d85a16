import type { Kysely } from 'kysely';
import { prepareQuery } from '../db/prepared-query.ts';
import type { AuditEventsTable, Database } from '../db/schema.ts';

/**
 * Who acted: an API client, a person (their account id), a console administrator, an operator
 * at the command line, or a wallet no account names (it holds an offer or answers a request:
 * Coffer does not know whose it is). Ids only: never an e-mail address or a name.
 */
export type AuditActor = `client:${number}` | `person:${string}` | `admin:${string}` | 'cli' | 'wallet';

/** What the trail records of one act: ids only, never e-mail addresses, claims, tokens or secrets. */
export interface AuditEvent {
  /** The tenant the act belongs to; null for acts of the whole service (e.g. a key rotation). */
  clientId: number | null;
  actor: AuditActor;
  /** A stable dotted name: `subclient.create`, `client.secret_rotate`, `login`, … */
  type: string;
  /** The ids the act touched, e.g. `{ subclient_id: 12 }`. */
  targets?: Record<string, string | number>;
  /** A refused log-in is a failure with a stable reason code; other refused acts record nothing. */
  outcome?: 'success' | 'failure';
  reason?: string;
  requestId?: string | undefined;
}

/** What a route knows of the act's author and request. */
export interface AuditContext {
  actor: AuditActor;
  requestId?: string | undefined;
}

export interface Audit {
  /**
   * Writes the event in `tx`, the act's own transaction (or its relaxed write), so the event is
   * there exactly when the act is. The row is sealed into the chain shortly after it commits.
   */
  record(tx: Kysely<Database>, event: AuditEvent): Promise<void>;
}

/** An unsealed row: the chain's columns are filled in by the sealer (audit-sealer.ts). */
type AuditRow = Omit<AuditEventsTable, 'id' | 'chain_seq' | 'prev_hash' | 'hash'>;

// Compiled once: an issuance records two or three events, and building each insert with Kysely
// cost more than running it (docs/benchmarks.md, "Seventh run").
const insertRow = prepareQuery<AuditRow, never>((db, param) =>
  db.insertInto('audit_events').values({
    occurred_at: param('occurred_at'),
    client_id: param('client_id'),
    actor: param('actor'),
    event_type: param('event_type'),
    targets: param('targets'),
    outcome: param('outcome'),
    reason: param('reason'),
    request_id: param('request_id'),
  }),
);

/** Inserts the unsealed row. */
export async function insertAuditEvent(
  db: Kysely<Database>,
  event: AuditEvent,
  at = new Date(),
): Promise<void> {
  await insertRow(db, {
    occurred_at: at.toISOString(),
    client_id: event.clientId,
    actor: event.actor,
    event_type: event.type,
    targets: JSON.stringify(event.targets ?? {}),
    outcome: event.outcome ?? 'success',
    reason: event.reason ?? null,
    request_id: event.requestId ?? null,
  });
}

/** An audit that writes rows and asks `afterWrite` (the sealer's nudge) to seal them soon. */
export function createAudit(afterWrite: () => void = () => {}): Audit {
  return {
    async record(tx, event) {
      await insertAuditEvent(tx, event);
      afterWrite();
    },
  };
}
