import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Dialect } from '../db/dialect.ts';
import { createGroupCommit } from '../db/group-commit.ts';
import { type Param, prepareQuery } from '../db/prepared-query.ts';
import type { AuthorizationCodesTable, Database } from '../db/schema.ts';

export type AuthorizationCodeRow = Selectable<AuthorizationCodesTable>;

export async function insertAuthorizationCode(
  db: Kysely<Database>,
  row: Insertable<AuthorizationCodesTable>,
) {
  await db.insertInto('authorization_codes').values(row).execute();
}

/**
 * Marks a code used and returns it, in one conditional update: of two concurrent redemptions
 * (on one instance or several) exactly one gets the row back.
 */
export async function consumeAuthorizationCode(
  db: Kysely<Database>,
  codeHash: string,
  nowSeconds: number,
): Promise<AuthorizationCodeRow | undefined> {
  return (await markCodeConsumed(db, { codeHash, nowSeconds }))[0];
}

// The token endpoint and every bearer check run these, so they are compiled once (db/prepared-query.ts).
const markCodeConsumed = prepareQuery((db, param: Param<{ codeHash: string; nowSeconds: number }>) =>
  db
    .updateTable('authorization_codes')
    .set({ consumed_at: param('nowSeconds') })
    .where('code_hash', '=', param('codeHash'))
    .where('consumed_at', 'is', null)
    .returningAll(),
);

const selectRevokedToken = prepareQuery((db, param: Param<{ jti: string }>) =>
  db.selectFrom('revoked_tokens').select('jti').where('jti', '=', param('jti')),
);

export type CodeConsumer = (
  codeHash: string,
  nowSeconds: number,
) => Promise<AuthorizationCodeRow | undefined>;

/**
 * consumeAuthorizationCode for many concurrent requests, committed together (group-commit.ts)
 * without waiting for the disk: a code lives 60 s, so only a power cut within a second of its
 * exchange could make it usable again, and only by its client (docs/storage.md, "Durability").
 */
export function createCodeConsumer(db: Kysely<Database>, dialect: Dialect): CodeConsumer {
  const consume = createGroupCommit(
    db,
    dialect,
    (tx, item: { codeHash: string; nowSeconds: number }) =>
      consumeAuthorizationCode(tx, item.codeHash, item.nowSeconds),
    { durability: 'process-crash', statements: 'one' },
  );
  return (codeHash, nowSeconds) => consume({ codeHash, nowSeconds });
}

export async function findAuthorizationCode(db: Kysely<Database>, codeHash: string) {
  return db
    .selectFrom('authorization_codes')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .executeTakeFirst();
}

export async function revokeToken(db: Kysely<Database>, jti: string, expiresAt: number): Promise<void> {
  await db
    .insertInto('revoked_tokens')
    .values({ jti, expires_at: expiresAt })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}

export async function isTokenRevoked(db: Kysely<Database>, jti: string): Promise<boolean> {
  return (await selectRevokedToken(db, { jti })).length > 0;
}
