import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { type ChainedRow, chainHash, GENESIS_HASH } from './audit-chain.ts';
import { signCheckpoint } from './audit-checkpoint.ts';

/** Rows sealed per transaction: a burst is sealed in several short transactions, not one long one. */
const SEAL_BATCH = 500;

/**
 * Serialises sealers across instances: on PostgreSQL a transaction-scoped advisory lock keyed by
 * the schema (so deployments sharing a database do not wait on each other); SQLite has one writer.
 * Only sealers take it: the audited acts themselves never wait on it.
 */
async function lockChain(tx: Kysely<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`select pg_advisory_xact_lock(hashtext(current_schema() || ':coffer-audit-chain'))`.execute(tx);
  }
}

/** The last sealed position, or the checkpoint retention left, or the genesis. */
async function chainHead(tx: Kysely<Database>): Promise<{ seq: number; hash: string }> {
  const last = await tx
    .selectFrom('audit_events')
    .select(['chain_seq', 'hash'])
    .where('chain_seq', 'is not', null)
    .orderBy('chain_seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (last) return { seq: Number(last.chain_seq), hash: last.hash! };
  const checkpoint = await tx
    .selectFrom('audit_checkpoints')
    .select(['chain_seq', 'hash'])
    .where('id', '=', 1)
    .executeTakeFirst();
  return checkpoint
    ? { seq: Number(checkpoint.chain_seq), hash: checkpoint.hash }
    : { seq: 0, hash: GENESIS_HASH };
}

const CHAINED_COLUMNS = [
  'id',
  'occurred_at',
  'client_id',
  'actor',
  'event_type',
  'targets',
  'outcome',
  'reason',
  'request_id',
] as const;

interface Position {
  id: number;
  seq: number;
  prev: string;
  hash: string;
}

/** Rows per UPDATE: four parameters each, under SQLite's and PostgreSQL's parameter limits. */
const POSITIONS_PER_STATEMENT = 100;

/**
 * One statement per hundred rows rather than one per row: under load the sealer runs every few
 * tens of milliseconds, and on PostgreSQL each statement costs the process 40–55 µs of CPU.
 */
async function writePositions(tx: Kysely<Database>, positions: Position[]): Promise<void> {
  for (let i = 0; i < positions.length; i += POSITIONS_PER_STATEMENT) {
    const values = positions
      .slice(i, i + POSITIONS_PER_STATEMENT)
      .map(
        (p) =>
          sql`(cast(${p.id} as bigint), cast(${p.seq} as bigint), cast(${p.prev} as text), cast(${p.hash} as text))`,
      );
    await sql`with positions (id, seq, prev, hash) as (values ${sql.join(values)})
      update audit_events set chain_seq = positions.seq, prev_hash = positions.prev, hash = positions.hash
      from positions where audit_events.id = positions.id`.execute(tx);
  }
}

/**
 * Gives every committed, unsealed row the next position and its hash, in id order. The chain's
 * order is the sealer's: a row whose transaction committed late simply gets a later position.
 * Returns how many rows it sealed.
 */
export async function sealAuditEvents(db: Kysely<Database>, dialect: Dialect): Promise<number> {
  let sealed = 0;
  for (;;) {
    const count = await db.transaction().execute(async (tx) => {
      await lockChain(tx, dialect);
      const rows: ChainedRow[] = await tx
        .selectFrom('audit_events')
        .select(CHAINED_COLUMNS)
        .where('chain_seq', 'is', null)
        .orderBy('id')
        .limit(SEAL_BATCH)
        .execute();
      if (rows.length === 0) return 0;
      let { seq, hash } = await chainHead(tx);
      const positions: Position[] = [];
      for (const row of rows) {
        seq += 1;
        const next = chainHash(hash, seq, row);
        positions.push({ id: row.id, seq, prev: hash, hash: next });
        hash = next;
      }
      await writePositions(tx, positions);
      return rows.length;
    });
    sealed += count;
    if (count < SEAL_BATCH) return sealed;
  }
}

/**
 * A sealer for one process: `nudge` (called after each audited write) seals soon, coalescing a
 * burst into one run (at most four runs a second: each run is a transaction and the lock, so
 * sealing every few milliseconds under load cost more than the rows' own inserts); `seal` seals now. Rows whose transaction had not committed at the run are
 * picked up by the next nudge or by the periodic run.
 */
export function createAuditSealer(db: Kysely<Database>, dialect: Dialect, delayMs = 250) {
  let running: Promise<unknown> = Promise.resolve();
  let scheduled = false;
  const seal = () => {
    running = running.then(() => sealAuditEvents(db, dialect)).catch(() => undefined);
    return running;
  };
  return {
    seal,
    nudge() {
      if (scheduled) return;
      scheduled = true;
      setTimeout(() => {
        scheduled = false;
        void seal();
      }, delayMs).unref();
    },
    /** Waits for the run under way (at shutdown). */
    idle: () => running,
  };
}

/**
 * Retention: deletes the oldest sealed rows while they are older than `retentionDays`, as one
 * prefix of the chain, and records the last deleted position and hash in a checkpoint signed with
 * the key derived from `masterKey`, where `coffer audit verify` starts. Returns how many rows went.
 */
export async function sweepAuditEvents(
  db: Kysely<Database>,
  dialect: Dialect,
  options: { retentionDays: number; masterKey: Uint8Array; now: Date },
): Promise<number> {
  const cutoff = new Date(options.now.getTime() - options.retentionDays * 86_400_000).toISOString();
  return db.transaction().execute(async (tx) => {
    await lockChain(tx, dialect);
    // The first position still within retention; everything before it goes.
    const firstKept = await tx
      .selectFrom('audit_events')
      .select('chain_seq')
      .where('chain_seq', 'is not', null)
      .where('occurred_at', '>=', cutoff)
      .orderBy('chain_seq')
      .limit(1)
      .executeTakeFirst();
    let last = tx
      .selectFrom('audit_events')
      .select(['chain_seq', 'hash'])
      .where('chain_seq', 'is not', null)
      .orderBy('chain_seq', 'desc')
      .limit(1);
    if (firstKept) last = last.where('chain_seq', '<', Number(firstKept.chain_seq));
    const end = await last.executeTakeFirst();
    if (!end) return 0;
    const seq = Number(end.chain_seq);
    const deleted = await tx.deleteFrom('audit_events').where('chain_seq', '<=', seq).executeTakeFirst();
    const checkpoint = {
      chain_seq: seq,
      hash: end.hash!,
      signature: signCheckpoint(options.masterKey, seq, end.hash!),
      created_at: options.now.toISOString(),
    };
    await tx
      .insertInto('audit_checkpoints')
      .values({ id: 1, ...checkpoint })
      .onConflict((c) => c.column('id').doUpdateSet(checkpoint))
      .execute();
    return Number(deleted.numDeletedRows);
  });
}
