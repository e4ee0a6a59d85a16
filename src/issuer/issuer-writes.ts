import type { Kysely } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit, type Durability } from '../db/group-commit.ts';
import type { Database } from '../db/schema.ts';

/** Statements that belong together, run in one transaction. */
export type Work<T> = (tx: Kysely<Database>) => Promise<T>;

/**
 * The issuer's writes, each endpoint's in one transaction, group-committed with the writes of
 * concurrent requests (db/group-commit.ts): an issuance costs two durable commits (the offer,
 * the credential) and two relaxed ones (the code's redemption, the c_nonce mark), each shared
 * by everyone waiting.
 * Within a work item only the first statement that writes may violate a unique constraint: a
 * violation undoes that statement alone, so nothing of the item is written (a lock taken before
 * it, a write that changes nothing, may stay).
 */
export interface IssuerWrites {
  /** What a tenant or a wallet handed over or was promised: survives a power cut. */
  durable<T>(work: Work<T>): Promise<T>;
  /** Single-use marks that expire within minutes (codes, c_nonces): survive a crash of the process. */
  relaxed<T>(work: Work<T>): Promise<T>;
  /** A relaxed write of a single statement: on PostgreSQL one round trip, no transaction around it. */
  relaxedStatement<T>(work: Work<T>): Promise<T>;
}

export function createIssuerWrites(db: Kysely<Database>, dialect: Dialect): IssuerWrites {
  const committer = (durability: Durability, statements: 'one' | 'many' = 'many') => {
    // PostgreSQL commits concurrent transactions together by itself; the work still needs one.
    if (dialect === 'postgres' && durability === 'power-loss') {
      return (work: Work<unknown>) => db.transaction().execute(work);
    }
    return createGroupCommit(db, dialect, (tx, work: Work<unknown>) => work(tx), { durability, statements });
  };
  const durable = committer('power-loss');
  const relaxed = committer('process-crash');
  const relaxedStatement = committer('process-crash', 'one');
  return {
    durable: <T>(work: Work<T>) => durable(work) as Promise<T>,
    relaxed: <T>(work: Work<T>) => relaxed(work) as Promise<T>,
    relaxedStatement: <T>(work: Work<T>) => relaxedStatement(work) as Promise<T>,
  };
}
