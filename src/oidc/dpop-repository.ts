import type { Kysely } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit } from '../db/group-commit.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type { Database } from '../db/schema.ts';

type ProofRow = { proofKey: string; expiresAt: number };

// Every DPoP request runs it, so it is compiled once (db/prepared-query.ts).
const insertProof = prepareQuery((db, param: Param<ProofRow>) =>
  db
    .insertInto('dpop_proofs')
    .values({ proof_key: param('proofKey'), expires_at: param('expiresAt') })
    .onConflict((oc) => oc.column('proof_key').doNothing())
    .returning('proof_key'),
);

/**
 * DPoP proof ids seen, in the database every instance shares, so a replayed proof is refused
 * wherever it arrives. Concurrent inserts share a commit (group-commit.ts), which does not wait
 * for the disk: an id matters only while its proof's iat is in the window (61 s).
 */
export function createProofRecorder(db: Kysely<Database>, dialect: Dialect) {
  const insert = createGroupCommit(
    db,
    dialect,
    async (tx, row: ProofRow) => (await insertProof(tx, row)).length > 0,
    { durability: 'process-crash', statements: 'one' },
  );
  return (proofKey: string, expiresAt: number) => insert({ proofKey, expiresAt });
}
