import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit } from '../db/group-commit.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type { CredentialsTable, Database } from '../db/schema.ts';
import type { HistoryEntry } from './history-events.ts';

export type CredentialRow = Pick<
  Selectable<CredentialsTable>,
  'credential_id' | 'cid' | 'content_hash' | 'format' | 'prepared_cid'
>;

const COLUMNS = ['credential_id', 'cid', 'content_hash', 'format', 'prepared_cid'] as const;

export async function insertCredential(
  db: Kysely<Database>,
  row: Insertable<CredentialsTable>,
): Promise<void> {
  await db.insertInto('credentials').values(row).execute();
}

/** Writes wallet history events with the given connection or transaction (wallet/wallet-history.ts). */
export type HistoryWriter = (db: Kysely<Database>, entries: HistoryEntry[]) => Promise<void>;

/** Inserts a credential and its arrival in the holder's history, in one commit. */
export type CredentialInserter = (row: Insertable<CredentialsTable>, arrival: HistoryEntry) => Promise<void>;

/**
 * insertCredential and the history's arrival event in one transaction, group-committed on SQLite
 * (db/group-commit.ts): a credential is never stored without its arrival, and a store waits for
 * one commit to the disk instead of two. A duplicate id fails the insert before the event is
 * written.
 */
export function createCredentialInserter(
  db: Kysely<Database>,
  dialect: Dialect,
  writeHistory: HistoryWriter,
): CredentialInserter {
  const write = createGroupCommit(
    db,
    dialect,
    async (tx, { row, arrival }: { row: Insertable<CredentialsTable>; arrival: HistoryEntry }) => {
      await insertCredential(tx, row);
      await writeHistory(tx, [arrival]);
    },
  );
  return (row, arrival) => write({ row, arrival });
}

/** One credential of a user by its id: a prepared query (every store and most presentations ask it). */
const selectCredential = prepareQuery((db, param: Param<{ userId: number; credentialId: string }>) =>
  db
    .selectFrom('credentials')
    .select(COLUMNS)
    .where('user_id', '=', param('userId'))
    .where('credential_id', '=', param('credentialId')),
);

export async function findCredential(
  db: Kysely<Database>,
  userId: number,
  credentialId: string,
): Promise<CredentialRow | undefined> {
  return (await selectCredential(db, { userId, credentialId }))[0];
}

export async function findCredentials(
  db: Kysely<Database>,
  userId: number,
  credentialIds: string[],
): Promise<CredentialRow[]> {
  // A presentation of one credential is the common case, and takes the prepared query.
  if (credentialIds.length === 1) {
    const row = await findCredential(db, userId, credentialIds[0]!);
    return row === undefined ? [] : [row];
  }
  return db
    .selectFrom('credentials')
    .select(COLUMNS)
    .where('user_id', '=', userId)
    .where('credential_id', 'in', credentialIds)
    .execute();
}

/** Every credential of a user, newest first. */
export async function listCredentials(db: Kysely<Database>, userId: number): Promise<CredentialRow[]> {
  return db
    .selectFrom('credentials')
    .select(COLUMNS)
    .where('user_id', '=', userId)
    .orderBy('credential_pk', 'desc')
    .execute();
}

/** A received credential and its copies (each with its sealed holder key), in one transaction. */
export async function insertReceivedCredential(
  db: Kysely<Database>,
  row: Insertable<CredentialsTable>,
  copies: Array<{ cid: string; holder_key_sealed: string }>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('credentials')
      .values(row)
      .returning('credential_pk')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('credential_copies')
      .values(
        copies.map((copy, index) => ({
          credential_pk: inserted.credential_pk,
          copy_index: index,
          cid: copy.cid,
          holder_key_sealed: copy.holder_key_sealed,
          presented_at: null,
        })),
      )
      .execute();
  });
}
