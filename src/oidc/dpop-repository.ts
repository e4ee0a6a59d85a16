import type { Kysely } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit } from '../db/group-commit.ts';
import type { Database } from '../db/schema.ts';

/**
 * DPoP proof ids seen, in the database every instance shares, so a replayed proof is refused
 * wherever it arrives. Concurrent inserts share a commit (group-commit.ts), which does not wait
 * for the disk: an id matters only while its proof's iat is in the window (61 s).
 */
export function createProofRecorder(db: Kysely<Database>, dialect: Dialect) {
  const insert = createGroupCommit(
    db,
    dialect,
    async (tx, row: { proofKey: string; expiresAt: number }) => {
      const inserted = await tx
        .insertInto('dpop_proofs')
        .values({ proof_key: row.proofKey, expires_at: row.expiresAt })
        .onConflict((oc) => oc.column('proof_key').doNothing())
        .returning('proof_key')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    { durability: 'process-crash' },
  );
  return (proofKey: string, expiresAt: number) => insert({ proofKey, expiresAt });
}
