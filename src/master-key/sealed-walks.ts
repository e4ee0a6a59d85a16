import { sql } from 'kysely';
import { sealedKeyId } from '../keys/field-cipher.ts';
import { EXPIRING_SEALED, type SealedColumn } from './sealed-columns.ts';
import { batches, type Row, size, type Walk } from './walk.ts';

// ---- sealed columns -------------------------------------------------------------------------------

/** Values not under the target key: v1 values (no key id) and v2 values of another key. */
const staleSql = (column: SealedColumn | { column: string }, kid: string) =>
  sql`t.${sql.ref(column.column)} is not null and t.${sql.ref(column.column)} not like ${`v2.${kid}.%`}`;

export async function walkSealed(walk: Walk, column: SealedColumn) {
  const { db, cipher } = walk.deps;
  const name = `${column.table}.${column.column}`;
  const tally = walk.tally('fields', name);
  const from = sql`${sql.table(column.table)} t ${sql.raw(column.joins ?? '')}`;
  if (walk.dry) {
    const counted = await sql<{
      n: number;
    }>`select count(*) as n from ${from} where ${staleSql(column, walk.kid)}`.execute(db);
    tally.remaining += Number(counted.rows[0]?.n ?? 0);
    return;
  }
  const extra = column.extra.length ? sql`, ${sql.raw(column.extra.join(', '))}` : sql``;
  const key = sql.ref(`t.${column.key}`);
  await batches(
    walk,
    name,
    async (after) =>
      (
        await sql<Row>`select ${key} as k, t.${sql.ref(column.column)} as v ${extra} from ${from}
          where ${staleSql(column, walk.kid)} ${after === undefined ? sql`` : sql`and ${key} > ${after}`}
          order by ${key} limit ${size(walk)}`.execute(db)
      ).rows,
    (row) => row['k'],
    async (row) => {
      const old = String(row['v']);
      try {
        const aad = column.aad(row);
        const sealed = cipher.encrypt(cipher.decrypt(old, aad), aad);
        const swapped = await sql`update ${sql.table(column.table)} set ${sql.ref(column.column)} = ${sealed}
          where ${sql.ref(column.key)} = ${row['k']} and ${sql.ref(column.column)} = ${old}`.execute(db);
        // Not swapped: a server changed the value meanwhile, under its current key (the target).
        if (Number(swapped.numAffectedRows ?? 0) > 0) tally.reencrypted++;
      } catch (error) {
        tally.failed++;
        walk.fail(`${name} of ${String(row['k'])}`, error);
      }
    },
  );
}

/** An issuance waiting for the issuer's answer keeps its PKCE verifier and key sealed in its params. */
export async function walkIssuanceAuthorizations(walk: Walk) {
  const { db, cipher } = walk.deps;
  const tally = walk.tally('fields', 'interactions.params (issuance authorization)');
  const now = (walk.deps.now?.() ?? new Date()).toISOString();
  const rows = await db
    .selectFrom('interactions')
    .select(['id', 'params'])
    .where('kind', '=', 'issuance')
    .where('expires_at', '>', now)
    .where('params', 'like', '%"codeVerifierSealed"%')
    .execute();
  for (const row of rows) {
    const params = JSON.parse(row.params) as { authorization?: Record<string, unknown> };
    const pending = params.authorization;
    const fields = [
      ['codeVerifierSealed', `interactions/${row.id}/pkce`],
      ['instanceKeySealed', `interactions/${row.id}/instance-key`],
    ] as const;
    const stale = fields.filter(
      ([field]) => typeof pending?.[field] === 'string' && sealedKeyId(pending[field] as string) !== walk.kid,
    );
    if (!pending || stale.length === 0) continue;
    if (walk.dry) {
      tally.remaining += stale.length;
      continue;
    }
    try {
      for (const [field, aad] of stale)
        pending[field] = cipher.encrypt(cipher.decrypt(pending[field] as string, aad), aad);
      const swapped = await db
        .updateTable('interactions')
        .set({ params: JSON.stringify(params) })
        .where('id', '=', row.id)
        .where('params', '=', row.params)
        .executeTakeFirst();
      if (Number(swapped.numUpdatedRows) > 0) tally.reencrypted += stale.length;
    } catch (error) {
      tally.failed++;
      walk.fail(`interaction ${row.id}`, error);
    }
  }
}

export async function countExpiring(walk: Walk): Promise<{ count: number; until: string | null }> {
  const nowSeconds = Math.floor((walk.deps.now?.() ?? new Date()).getTime() / 1000);
  const result = await sql<{ n: number; until: number | null }>`select count(*) as n, max(expires_at) as until
    from ${sql.table(EXPIRING_SEALED.table)} t
    where ${staleSql(EXPIRING_SEALED, walk.kid)} and t.expires_at > ${nowSeconds}`.execute(walk.deps.db);
  const row = result.rows[0];
  const count = Number(row?.n ?? 0);
  return { count, until: count > 0 && row?.until ? new Date(Number(row.until) * 1000).toISOString() : null };
}
