import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { chainHash, GENESIS_HASH } from './audit-chain.ts';
import { checkpointSignedBy } from './audit-checkpoint.ts';

export type ChainReport =
  | { ok: true; from: number; to: number; sealed: number; unsealed: number }
  | { ok: false; position: number; problem: string };

const PAGE = 1000;

/**
 * Walks the chain from the checkpoint (whose signature must hold) or the genesis, and reports the
 * first break: a missing position (a deleted row), a row whose prev_hash is not its
 * predecessor's hash (reordered), or whose hash does not match its content (edited).
 */
export async function verifyAuditChain(
  db: Kysely<Database>,
  masterKeys: readonly Uint8Array[],
): Promise<ChainReport> {
  const checkpoint = await db
    .selectFrom('audit_checkpoints')
    .selectAll()
    .where('id', '=', 1)
    .executeTakeFirst();
  let seq = 0;
  let hash = GENESIS_HASH;
  if (checkpoint) {
    seq = Number(checkpoint.chain_seq);
    hash = checkpoint.hash;
    if (!checkpointSignedBy(masterKeys, { seq, hash, signature: checkpoint.signature })) {
      return { ok: false, position: seq, problem: 'the retention checkpoint is not signed by this server' };
    }
  }
  const from = seq + 1;
  let sealed = 0;
  for (;;) {
    const rows = await db
      .selectFrom('audit_events')
      .selectAll()
      .where('chain_seq', 'is not', null)
      .where('chain_seq', '>', seq)
      .orderBy('chain_seq')
      .limit(PAGE)
      .execute();
    for (const row of rows) {
      const expected = seq + 1;
      const at = Number(row.chain_seq);
      if (at !== expected) {
        return { ok: false, position: expected, problem: `position ${expected} is missing (next is ${at})` };
      }
      if (row.prev_hash !== hash) {
        return {
          ok: false,
          position: at,
          problem: 'its previous hash is not the hash of the position before it',
        };
      }
      if (chainHash(hash, at, row) !== row.hash) {
        return { ok: false, position: at, problem: 'its content does not match its hash' };
      }
      seq = at;
      hash = row.hash;
      sealed += 1;
    }
    if (rows.length < PAGE) break;
  }
  const unsealed = await db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('chain_seq', 'is', null)
    .executeTakeFirstOrThrow();
  return { ok: true, from, to: seq, sealed, unsealed: Number(unsealed.n) };
}
