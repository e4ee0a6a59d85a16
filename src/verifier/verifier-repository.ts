import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Audit, AuditEvent } from '../audit/audit-events.ts';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit } from '../db/group-commit.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type { Database, VerifierRequestStatus, VerifierRequestsTable } from '../db/schema.ts';

export type VerifierRequestRow = Selectable<VerifierRequestsTable>;

/** Enabling again replaces the key and chain: requests made from now on use the new ones. */
export async function saveVerifier(
  db: Kysely<Database>,
  row: { client_id: number; key_sealed: string; chain_pem: string; created_at: string },
): Promise<void> {
  await db
    .insertInto('verifiers')
    .values(row)
    .onConflict((oc) =>
      oc.column('client_id').doUpdateSet({
        key_sealed: row.key_sealed,
        chain_pem: row.chain_pem,
        created_at: row.created_at,
      }),
    )
    .execute();
}

// Every verification reads these, so they are compiled once (db/prepared-query.ts).
const selectVerifier = prepareQuery((db, param: Param<{ clientId: number }>) =>
  db
    .selectFrom('verifiers')
    .innerJoin('clients', 'clients.client_id', 'verifiers.client_id')
    .select(['verifiers.client_id', 'verifiers.key_sealed', 'verifiers.chain_pem', 'clients.name'])
    .where('verifiers.client_id', '=', param('clientId')),
);

const selectVerifierRequest = prepareQuery((db, param: Param<{ id: string }>) =>
  db.selectFrom('verifier_requests').selectAll().where('id', '=', param('id')),
);

export async function findVerifier(db: Kysely<Database>, clientId: number) {
  return (await selectVerifier(db, { clientId }))[0];
}

export async function insertVerifierRequest(
  db: Kysely<Database>,
  row: Insertable<VerifierRequestsTable>,
): Promise<void> {
  await db.insertInto('verifier_requests').values(row).execute();
}

export async function findVerifierRequest(
  db: Kysely<Database>,
  id: string,
): Promise<VerifierRequestRow | undefined> {
  return (await selectVerifierRequest(db, { id }))[0];
}

/** The newest request made for a log-in interaction (logging in with a wallet), if any. */
export async function findRequestOfInteraction(
  db: Kysely<Database>,
  interactionId: string,
): Promise<VerifierRequestRow | undefined> {
  return db
    .selectFrom('verifier_requests')
    .selectAll()
    .where('interaction_id', '=', interactionId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Moves a request on from one of the given states only, so two answers (or an answer and an
 * expiry) cannot both win: false when another request changed it first.
 */
export async function advanceVerifierRequest(
  db: Kysely<Database>,
  id: string,
  from: VerifierRequestStatus[],
  changes: Updateable<VerifierRequestsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('verifier_requests')
    .set(changes)
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function updateVerifierRequest(
  db: Kysely<Database>,
  id: string,
  changes: Updateable<VerifierRequestsTable>,
): Promise<void> {
  await db.updateTable('verifier_requests').set(changes).where('id', '=', id).execute();
}

/** Drops the claims of results first read at or before `readBefore` (RESULT_RETENTION). */
export async function dropReadClaims(db: Kysely<Database>, readBefore: string): Promise<number> {
  const result = await db
    .updateTable('verifier_requests')
    .set({ claims_sealed: null })
    .where('first_read_at', '<=', readBefore)
    .where('claims_sealed', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The verifier's writes with group commit (db/group-commit.ts): concurrent requests share one
 * commit. A new request and a settled result wait for the disk; the two marks that only say how
 * far a request has come — fetched by a wallet, first read by the tenant — do not, and a power
 * cut may undo the last of them (the request then reads `created` again, or its claims are kept
 * until the next read starts the retention anew), never a result.
 */
export function createVerifierWriters(db: Kysely<Database>, dialect: Dialect, audit?: Audit) {
  const advance = (tx: Kysely<Database>, row: AdvanceRow) =>
    advanceVerifierRequest(tx, row.id, row.from, row.changes);
  return {
    insertRequest: createGroupCommit(
      db,
      dialect,
      async (tx, item: { row: Insertable<VerifierRequestsTable>; event?: AuditEvent | undefined }) => {
        await insertVerifierRequest(tx, item.row);
        if (item.event) await audit?.record(tx, item.event);
      },
    ),
    // The answer's event commits with it, and only when the answer was taken (not a refused one).
    settle: createGroupCommit(db, dialect, async (tx, row: AdvanceRow & { event: AuditEvent }) => {
      const advanced = await advance(tx, row);
      if (advanced) await audit?.record(tx, row.event);
      return advanced;
    }),
    markRetrieved: createGroupCommit(db, dialect, advance, {
      durability: 'process-crash',
      statements: 'one',
    }),
    markFirstRead: createGroupCommit(
      db,
      dialect,
      async (tx, row: { id: string; at: string }) => {
        await tx
          .updateTable('verifier_requests')
          .set({ first_read_at: row.at })
          .where('id', '=', row.id)
          .where('first_read_at', 'is', null)
          .execute();
      },
      { durability: 'process-crash', statements: 'one' },
    ),
  };
}

interface AdvanceRow {
  id: string;
  from: VerifierRequestStatus[];
  changes: Updateable<VerifierRequestsTable>;
}

export type VerifierWriters = ReturnType<typeof createVerifierWriters>;

/**
 * Links Coffer's own request to the accounts whose hosted wallet answered it (the answer reached
 * the response endpoint), so that erasing one of them deletes the claims its result holds.
 */
export async function linkRequestToAccounts(db: Kysely<Database>, requestId: string, userIds: number[]) {
  if (userIds.length === 0) return;
  const known = await db
    .selectFrom('verifier_requests')
    .select('id')
    .where('id', '=', requestId)
    .executeTakeFirst();
  if (!known) return;
  await db
    .insertInto('verifier_request_accounts')
    .values([...new Set(userIds)].map((user_id) => ({ request_id: requestId, user_id })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Deletes the verified claims of the requests an account's hosted wallet answered (its erasure). */
export async function deleteClaimsAnsweredBy(db: Kysely<Database>, userId: number): Promise<void> {
  await db
    .updateTable('verifier_requests')
    .set({ claims_sealed: null })
    .where('id', 'in', (eb) =>
      eb.selectFrom('verifier_request_accounts').select('request_id').where('user_id', '=', userId),
    )
    .where('claims_sealed', 'is not', null)
    .execute();
}

/** A page of a client's requests, newest first, after the (created_at, id) of the last one shown. */
export async function pageClientRequests(
  db: Kysely<Database>,
  clientId: number,
  after: { createdAt: string; id: string } | undefined,
  limit: number,
): Promise<VerifierRequestRow[]> {
  let select = db.selectFrom('verifier_requests').selectAll().where('client_id', '=', clientId);
  if (after)
    select = select.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  return select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}
