import { type Kysely, sql } from 'kysely';
import { contentHash, credentialContext, preparedContext } from '../credentials/credential-service.ts';
import { copyKeyContext } from '../credentials/held-credential-contexts.ts';
import { isUniqueViolation } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { createEmailIndex } from '../keys/blind-index.ts';
import { deriveKey } from '../keys/derive-key.ts';
import { type FieldCipher, sealedKeyId } from '../keys/field-cipher.ts';
import { masterKeyId } from '../keys/master-key-ring.ts';
import type { BlockContext, EncryptedStore } from '../storage/index.ts';
import { profileContext } from '../users/user-service.ts';
import { EXPIRING_SEALED, SEALED_COLUMNS, type SealedColumn } from './sealed-columns.ts';

/**
 * `coffer master-key rotate`: every block a row names and every sealed value is rewritten under
 * the target key, and the keyed hashes (e-mail blind index, credential content hash) are
 * recomputed with it. Each row is changed by compare-and-swap on the value it was read with, so
 * a concurrent change by a running server wins and the row is read again. Nothing records
 * progress: a value already under the target key is skipped, so a run after a crash continues.
 */
export interface RotationDeps {
  db: Kysely<Database>;
  /** Reads with every key of the ring, writes under the target. */
  store: EncryptedStore;
  cipher: FieldCipher;
  target: Uint8Array;
  /** Progress lines for the operator. */
  log: (line: string) => void;
  batchSize?: number;
  /** How long old blocks stay after their rows moved, for reads that already hold the old CID. */
  removalDelayMs?: number;
  now?: () => Date;
}

export interface Tally {
  reencrypted: number;
  remaining: number;
  failed: number;
}

export interface RotationReport {
  kid: string;
  dry_run: boolean;
  blocks: { reencrypted: number; remaining: number; by_kind: Record<string, Tally> };
  fields: { reencrypted: number; remaining: number; by_column: Record<string, Tally> };
  hashes: { rewritten: number; remaining: number; by_column: Record<string, Tally> };
  /** Sealed values that cannot be rewritten and expire instead (sealed-columns.ts). */
  expiring: { count: number; until: string | null };
  old_blocks_removed: number;
  failed: number;
  failures: string[];
  remaining: number;
}

type Row = Record<string, unknown>;

interface Walk {
  deps: RotationDeps;
  dry: boolean;
  kid: string;
  emailIndex: (email: string) => string;
  contentKey: Uint8Array;
  tally: (group: 'blocks' | 'fields' | 'hashes', name: string) => Tally;
  fail: (what: string, error: unknown) => void;
  /** CIDs whose rows now name a new block: removed at the end if no row names them. */
  retired: string[];
}

const MAX_ATTEMPTS = 5;

export async function rotateMasterKey(deps: RotationDeps, dryRun: boolean): Promise<RotationReport> {
  const walk = newWalk(deps, dryRun);
  await walkUsers(walk);
  await walkCredentials(walk);
  await walkPrepared(walk);
  await walkCopies(walk);
  for (const column of SEALED_COLUMNS) await walkSealed(walk, column);
  await walkIssuanceAuthorizations(walk);
  const removed = dryRun ? 0 : await removeRetired(walk);
  // What is left is counted again, as --dry-run would: a value written meanwhile under an old key
  // (a server not restarted yet) or one that failed.
  const left = dryRun ? walk : newWalk(deps, true);
  if (!dryRun) {
    left.deps = { ...deps, log: () => {} };
    await walkUsers(left);
    await walkCredentials(left);
    await walkPrepared(left);
    await walkCopies(left);
    for (const column of SEALED_COLUMNS) await walkSealed(left, column);
    await walkIssuanceAuthorizations(left);
  }
  const expiring = await countExpiring(walk);
  return report(walk, left, expiring, removed);
}

function newWalk(
  deps: RotationDeps,
  dry: boolean,
): Walk & { tallies: Map<string, Tally>; failures: string[] } {
  const tallies = new Map<string, Tally>();
  const failures: string[] = [];
  return {
    deps,
    dry,
    kid: masterKeyId(deps.target),
    emailIndex: createEmailIndex(deps.target),
    contentKey: deriveKey(deps.target, 'credential-content/v1'),
    tallies,
    failures,
    retired: [],
    tally(group, name) {
      const key = `${group}\u0000${name}`;
      let tally = tallies.get(key);
      if (!tally) {
        tally = { reencrypted: 0, remaining: 0, failed: 0 };
        tallies.set(key, tally);
      }
      return tally;
    },
    fail(what, error) {
      failures.push(`${what}: ${(error as Error)?.message ?? String(error)}`);
    },
  };
}

/** One unit of work with compare-and-swap: a false result means the row changed; it is read again. */
async function withRetries(walk: Walk, what: string, tally: Tally, attempt: () => Promise<boolean>) {
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    try {
      if (await attempt()) return;
    } catch (error) {
      tally.failed++;
      walk.fail(what, error);
      return;
    }
  }
  tally.failed++;
  walk.fail(what, new Error('it kept changing while being rewritten; run the rotation again'));
}

async function batches<T extends Row>(
  walk: Walk,
  label: string,
  page: (after: unknown) => Promise<T[]>,
  keyOf: (row: T) => unknown,
  each: (row: T) => Promise<void>,
) {
  let after: unknown;
  let seen = 0;
  for (;;) {
    const rows = await page(after);
    if (rows.length === 0) return;
    for (const row of rows) await each(row);
    after = keyOf(rows[rows.length - 1]!);
    seen += rows.length;
    if (!walk.dry) walk.deps.log(`${label}: ${seen} checked`);
  }
}

const size = (walk: Walk) => walk.deps.batchSize ?? 100;

/** A block read again under the target key: its new CID (the old one is retired by the caller). */
async function resealBlock(walk: Walk, cid: string, context: BlockContext, value?: unknown): Promise<string> {
  const plain = value ?? (await walk.deps.store.getEncrypted(cid, context));
  return walk.deps.store.putEncrypted(plain, context);
}

async function dropUnused(walk: Walk, cid: string) {
  if (!(await referenced(walk.deps.db, cid))) await walk.deps.store.removeEncrypted(cid).catch(() => {});
}

// ---- users: profile blocks and the e-mail blind index -------------------------------------------

interface UserRow extends Row {
  user_id: number;
  did: string;
  profile_cid: string;
  email_index: string | null;
}

async function walkUsers(walk: Walk) {
  const { db } = walk.deps;
  const blocks = walk.tally('blocks', 'profile');
  const hashes = walk.tally('hashes', 'users.email_index');
  const read = (userId: number) =>
    db
      .selectFrom('users')
      .select(['user_id', 'did', 'profile_cid', 'email_index'])
      .where('user_id', '=', userId)
      .executeTakeFirst();
  await batches<UserRow>(
    walk,
    'profiles',
    (after) =>
      db
        .selectFrom('users')
        .select(['user_id', 'did', 'profile_cid', 'email_index'])
        .$if(after !== undefined, (q) => q.where('user_id', '>', after as number))
        .orderBy('user_id')
        .limit(size(walk))
        .execute(),
    (row) => row.user_id,
    async (first) => {
      let row: UserRow | undefined = first;
      await withRetries(walk, `user ${first.user_id}`, blocks, async () => {
        if (!row) return true;
        const done = await rotateUser(walk, row, blocks, hashes);
        if (!done) row = await read(first.user_id);
        return done;
      });
    },
  );
}

async function rotateUser(walk: Walk, row: UserRow, blocks: Tally, hashes: Tally): Promise<boolean> {
  const { db, store } = walk.deps;
  const context = profileContext(row.did);
  const blockStale = (await store.kidOf(row.profile_cid)) !== walk.kid;
  let profile: Record<string, unknown> | undefined;
  let index = row.email_index;
  if (row.email_index !== null) {
    profile = (await store.getEncrypted(row.profile_cid, context)) as Record<string, unknown>;
    if (typeof profile['email_address'] !== 'string') throw new Error('the profile holds no e-mail address');
    index = walk.emailIndex(profile['email_address']);
  }
  const indexStale = index !== row.email_index;
  if (walk.dry) {
    if (blockStale) blocks.remaining++;
    if (indexStale) hashes.remaining++;
    return true;
  }
  if (!blockStale && !indexStale) return true;
  const cid = blockStale ? await resealBlock(walk, row.profile_cid, context, profile) : row.profile_cid;
  let swapped: boolean;
  try {
    swapped = await db.transaction().execute(async (tx) => {
      if (blockStale) {
        const moved = await tx
          .updateTable('users')
          .set({ profile_cid: cid })
          .where('user_id', '=', row.user_id)
          .where('profile_cid', '=', row.profile_cid)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return false;
      }
      if (indexStale) {
        // Every account with the old index has the same e-mail (in any tenant): they move together,
        // so the accounts of one person keep matching each other (users/user-repository.ts).
        await tx
          .updateTable('users')
          .set({ email_index: index })
          .where('email_index', '=', row.email_index)
          .execute();
        await tx
          .updateTable('interactions')
          .set({ identity_email_index: index })
          .where('identity_email_index', '=', row.email_index)
          .execute();
      }
      return true;
    });
  } catch (error) {
    if (blockStale) await dropUnused(walk, cid);
    if (isUniqueViolation(error)) {
      throw new Error(
        'another account of its tenant signed up with the same e-mail under the new key; remove one of the two, then run the rotation again',
      );
    }
    throw error;
  }
  if (!swapped) {
    await dropUnused(walk, cid);
    return false;
  }
  if (blockStale) {
    blocks.reencrypted++;
    walk.retired.push(row.profile_cid);
  }
  if (indexStale) hashes.reencrypted++;
  return true;
}

// ---- credentials: blocks, content hashes, the copy that shares the block -------------------------

interface CredentialRow extends Row {
  credential_pk: number;
  cid: string;
  content_hash: string;
  did: string;
}

const credentialRows = (db: Kysely<Database>) =>
  db
    .selectFrom('credentials as c')
    .innerJoin('users as u', 'u.user_id', 'c.user_id')
    .select(['c.credential_pk', 'c.cid', 'c.content_hash', 'c.prepared_cid', 'u.did']);

async function walkCredentials(walk: Walk) {
  const { db } = walk.deps;
  const blocks = walk.tally('blocks', 'credential');
  const hashes = walk.tally('hashes', 'credentials.content_hash');
  await batches<CredentialRow>(
    walk,
    'credentials',
    (after) =>
      credentialRows(db)
        .$if(after !== undefined, (q) => q.where('c.credential_pk', '>', after as number))
        .orderBy('c.credential_pk')
        .limit(size(walk))
        .execute(),
    (row) => row.credential_pk,
    async (first) => {
      let row: CredentialRow | undefined = first;
      await withRetries(walk, `credential ${first.credential_pk}`, blocks, async () => {
        if (!row) return true;
        const done = await rotateCredential(walk, row, blocks, hashes);
        if (!done) {
          row = await credentialRows(db)
            .where('c.credential_pk', '=', first.credential_pk)
            .executeTakeFirst();
        }
        return done;
      });
    },
  );
}

async function rotateCredential(
  walk: Walk,
  row: CredentialRow,
  blocks: Tally,
  hashes: Tally,
): Promise<boolean> {
  const { db, store, cipher } = walk.deps;
  const context = credentialContext(row.did);
  const blockStale = (await store.kidOf(row.cid)) !== walk.kid;
  const value = await store.getEncrypted(row.cid, context);
  const hash = contentHash({ contentKey: walk.contentKey }, value);
  const hashStale = hash !== row.content_hash;
  if (walk.dry) {
    if (blockStale) blocks.remaining++;
    if (hashStale) hashes.remaining++;
    return true;
  }
  if (!blockStale && !hashStale) return true;
  const cid = blockStale ? await resealBlock(walk, row.cid, context, value) : row.cid;
  // A received credential's first copy names the same block; its sealed holder key names the CID.
  const copies = blockStale
    ? await db
        .selectFrom('credential_copies')
        .select(['copy_index', 'holder_key_sealed'])
        .where('credential_pk', '=', row.credential_pk)
        .where('cid', '=', row.cid)
        .execute()
    : [];
  const resealed = copies.map((copy) => ({
    ...copy,
    sealed: cipher.encrypt(
      cipher.decrypt(copy.holder_key_sealed, copyKeyContext(row.did, row.cid)),
      copyKeyContext(row.did, cid),
    ),
  }));
  const swapped = await db
    .transaction()
    .execute(async (tx) => {
      const moved = await tx
        .updateTable('credentials')
        .set({ cid, content_hash: hash })
        .where('credential_pk', '=', row.credential_pk)
        .where('cid', '=', row.cid)
        .where('content_hash', '=', row.content_hash)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) === 0) throw new ChangedMeanwhile();
      for (const copy of resealed) {
        const copied = await tx
          .updateTable('credential_copies')
          .set({ cid, holder_key_sealed: copy.sealed })
          .where('credential_pk', '=', row.credential_pk)
          .where('copy_index', '=', copy.copy_index)
          .where('cid', '=', row.cid)
          .where('holder_key_sealed', '=', copy.holder_key_sealed)
          .executeTakeFirst();
        if (Number(copied.numUpdatedRows) === 0) throw new ChangedMeanwhile();
      }
      return true;
    })
    .catch((error: unknown) => {
      if (error instanceof ChangedMeanwhile) return false;
      throw error;
    });
  if (!swapped) {
    if (blockStale) await dropUnused(walk, cid);
    return false;
  }
  if (blockStale) {
    blocks.reencrypted++;
    walk.retired.push(row.cid);
  }
  if (hashStale) hashes.reencrypted++;
  return true;
}

/** Rolls a transaction back: a row it swaps changed since it was read. */
class ChangedMeanwhile extends Error {}

async function walkPrepared(walk: Walk) {
  const { db, store } = walk.deps;
  const blocks = walk.tally('blocks', 'credential-prepared');
  const rows = (after: unknown) =>
    db
      .selectFrom('credentials as c')
      .innerJoin('users as u', 'u.user_id', 'c.user_id')
      .select(['c.credential_pk', 'c.prepared_cid', 'u.did'])
      .where('c.prepared_cid', 'is not', null)
      .$if(after !== undefined, (q) => q.where('c.credential_pk', '>', after as number))
      .orderBy('c.credential_pk')
      .limit(size(walk))
      .execute();
  await batches(
    walk,
    'prepared statements',
    rows,
    (row) => row.credential_pk,
    async (row) => {
      await withRetries(walk, `prepared statements of credential ${row.credential_pk}`, blocks, async () => {
        const current = await db
          .selectFrom('credentials')
          .select('prepared_cid')
          .where('credential_pk', '=', row.credential_pk)
          .executeTakeFirst();
        const old = current?.prepared_cid;
        if (!old || (await store.kidOf(old)) === walk.kid) return true;
        if (walk.dry) {
          blocks.remaining++;
          return true;
        }
        const context = preparedContext(row.did);
        const cid = await resealBlock(walk, old, context);
        const moved = await db
          .updateTable('credentials')
          .set({ prepared_cid: cid })
          .where('credential_pk', '=', row.credential_pk)
          .where('prepared_cid', '=', old)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) {
          await dropUnused(walk, cid);
          return false;
        }
        blocks.reencrypted++;
        walk.retired.push(old);
        return true;
      });
    },
  );
}

/** Copies beyond the first of a batch-issued credential: their own blocks and holder keys. */
async function walkCopies(walk: Walk) {
  const { db, store, cipher } = walk.deps;
  const blocks = walk.tally('blocks', 'credential-copy');
  const rows = (after: unknown) =>
    db
      .selectFrom('credential_copies as k')
      .innerJoin('credentials as c', 'c.credential_pk', 'k.credential_pk')
      .innerJoin('users as u', 'u.user_id', 'c.user_id')
      .select(['k.credential_pk', 'k.copy_index', 'k.cid', 'k.holder_key_sealed', 'u.did'])
      .whereRef('k.cid', '!=', 'c.cid')
      .$if(after !== undefined, (q) => q.where('k.cid', '>', after as string))
      .orderBy('k.cid')
      .limit(size(walk))
      .execute();
  await batches(
    walk,
    'credential copies',
    rows,
    (row) => row.cid,
    async (row) => {
      if ((await store.kidOf(row.cid)) === walk.kid) return;
      if (walk.dry) {
        blocks.remaining++;
        return;
      }
      await withRetries(
        walk,
        `copy ${row.copy_index} of credential ${row.credential_pk}`,
        blocks,
        async () => {
          const cid = await resealBlock(walk, row.cid, credentialContext(row.did));
          const holderKey = cipher.encrypt(
            cipher.decrypt(row.holder_key_sealed, copyKeyContext(row.did, row.cid)),
            copyKeyContext(row.did, cid),
          );
          const moved = await db
            .updateTable('credential_copies')
            .set({ cid, holder_key_sealed: holderKey })
            .where('credential_pk', '=', row.credential_pk)
            .where('copy_index', '=', row.copy_index)
            .where('cid', '=', row.cid)
            .where('holder_key_sealed', '=', row.holder_key_sealed)
            .executeTakeFirst();
          if (Number(moved.numUpdatedRows) === 0) {
            // Changed or deleted meanwhile: whatever it holds now was written by a server.
            await dropUnused(walk, cid);
            return true;
          }
          blocks.reencrypted++;
          walk.retired.push(row.cid);
          return true;
        },
      );
    },
  );
}

// ---- sealed columns -------------------------------------------------------------------------------

/** Values not under the target key: v1 values (no key id) and v2 values of another key. */
const staleSql = (column: SealedColumn | { column: string }, kid: string) =>
  sql`t.${sql.ref(column.column)} is not null and t.${sql.ref(column.column)} not like ${`v2.${kid}.%`}`;

async function walkSealed(walk: Walk, column: SealedColumn) {
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
async function walkIssuanceAuthorizations(walk: Walk) {
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

async function countExpiring(walk: Walk): Promise<{ count: number; until: string | null }> {
  const nowSeconds = Math.floor((walk.deps.now?.() ?? new Date()).getTime() / 1000);
  const result = await sql<{ n: number; until: number | null }>`select count(*) as n, max(expires_at) as until
    from ${sql.table(EXPIRING_SEALED.table)} t
    where ${staleSql(EXPIRING_SEALED, walk.kid)} and t.expires_at > ${nowSeconds}`.execute(walk.deps.db);
  const row = result.rows[0];
  const count = Number(row?.n ?? 0);
  return { count, until: count > 0 && row?.until ? new Date(Number(row.until) * 1000).toISOString() : null };
}

// ---- old blocks ------------------------------------------------------------------------------------

async function referenced(db: Kysely<Database>, cid: string): Promise<boolean> {
  const result = await sql<{ one: number }>`select 1 as one from users where profile_cid = ${cid}
    union all select 1 from credentials where cid = ${cid} or prepared_cid = ${cid}
    union all select 1 from credential_copies where cid = ${cid}`.execute(db);
  return result.rows.length > 0;
}

/**
 * Old blocks go once no row names them, after a pause: a request that read a row just before the
 * swap may still be fetching its block. A crash before this leaves them for `coffer storage gc`.
 */
async function removeRetired(walk: Walk): Promise<number> {
  if (walk.retired.length === 0) return 0;
  await new Promise((resolve) => setTimeout(resolve, walk.deps.removalDelayMs ?? 2000));
  let removed = 0;
  for (const cid of new Set(walk.retired)) {
    if (await referenced(walk.deps.db, cid)) continue;
    await walk.deps.store.removeEncrypted(cid);
    removed++;
  }
  walk.deps.log(`old blocks: ${removed} removed`);
  return removed;
}

// ---- the report ------------------------------------------------------------------------------------

function report(
  done: Walk & { tallies: Map<string, Tally>; failures: string[] },
  left: Walk & { tallies: Map<string, Tally> },
  expiring: { count: number; until: string | null },
  removed: number,
): RotationReport {
  const groups = { blocks: {} as Record<string, Tally>, fields: {}, hashes: {} } as Record<
    'blocks' | 'fields' | 'hashes',
    Record<string, Tally>
  >;
  for (const [key, tally] of done.tallies) {
    const [group, name] = key.split('\u0000') as ['blocks' | 'fields' | 'hashes', string];
    const remaining = left.tallies.get(key)?.remaining ?? 0;
    groups[group][name] = { reencrypted: tally.reencrypted, remaining, failed: tally.failed };
  }
  const sum = (group: Record<string, Tally>, field: keyof Tally) =>
    Object.values(group).reduce((total, tally) => total + tally[field], 0);
  const remaining =
    sum(groups.blocks, 'remaining') +
    sum(groups.fields, 'remaining') +
    sum(groups.hashes, 'remaining') +
    expiring.count;
  return {
    kid: done.kid,
    dry_run: done.dry,
    blocks: {
      reencrypted: sum(groups.blocks, 'reencrypted'),
      remaining: sum(groups.blocks, 'remaining'),
      by_kind: groups.blocks,
    },
    fields: {
      reencrypted: sum(groups.fields, 'reencrypted'),
      remaining: sum(groups.fields, 'remaining'),
      by_column: groups.fields,
    },
    hashes: {
      rewritten: sum(groups.hashes, 'reencrypted'),
      remaining: sum(groups.hashes, 'remaining'),
      by_column: groups.hashes,
    },
    expiring,
    old_blocks_removed: removed,
    failed: sum(groups.blocks, 'failed') + sum(groups.fields, 'failed') + sum(groups.hashes, 'failed'),
    failures: done.failures.slice(0, 20),
    remaining,
  };
}
