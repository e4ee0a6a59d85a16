import type { Kysely } from 'kysely';
import { contentHash, credentialContext, preparedContext } from '../credentials/credential-service.ts';
import { copyKeyContext } from '../credentials/held-credential-contexts.ts';
import { isUniqueViolation } from '../db/dialect.ts';
import { isBlockReferenced } from '../db/referenced-blocks.ts';
import type { Database } from '../db/schema.ts';
import { StorageError } from '../storage/index.ts';
import { profileContext } from '../users/user-service.ts';
import {
  batches,
  dropUnused,
  type Row,
  resealBlock,
  size,
  type Tally,
  type Walk,
  withRetries,
} from './walk.ts';

// ---- users: profile blocks and the e-mail blind index -------------------------------------------

interface UserRow extends Row {
  user_id: number;
  did: string;
  profile_cid: string;
  email_index: string | null;
}

export async function walkUsers(walk: Walk) {
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
        // A console administrator with an account here moves with it; one without an account has
        // no sealed address to recompute the index from, and is added again (docs/console.md).
        await tx
          .updateTable('console_admins')
          .set({ email_index: index })
          .where('email_index', '=', row.email_index)
          .execute();
        await tx
          .updateTable('console_sessions')
          .set({ email_index: index })
          .where('email_index', '=', row.email_index)
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

export async function walkCredentials(walk: Walk) {
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

export async function walkPrepared(walk: Walk) {
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
        if (!old) return true;
        // Written without fsync (credential-service.ts), the block may have been lost to an OS
        // crash: absent, or torn so that it fails its CID. Only a cache, so the credential forgets
        // it rather than keep the rotation from ever finishing.
        const kid = await store.kidOf(old).catch((error: unknown) => {
          if (error instanceof StorageError && LOST_BLOCK.has(error.code)) return null;
          throw error;
        });
        if (kid === null) {
          if (!walk.dry) await forgetPrepared(db, row.credential_pk, old);
          return true;
        }
        if (kid === walk.kid) return true;
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

const LOST_BLOCK = new Set(['block_not_found', 'integrity_error']);

function forgetPrepared(db: Kysely<Database>, credentialPk: number, cid: string) {
  return db
    .updateTable('credentials')
    .set({ prepared_cid: null })
    .where('credential_pk', '=', credentialPk)
    .where('prepared_cid', '=', cid)
    .execute();
}

/** Copies beyond the first of a batch-issued credential: their own blocks and holder keys. */
export async function walkCopies(walk: Walk) {
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

// ---- old blocks ------------------------------------------------------------------------------------

/**
 * Old blocks go once no row names them, after a pause: a request that read a row just before the
 * swap may still be fetching its block. A crash before this leaves them for `coffer storage gc`.
 */
export async function removeRetired(walk: Walk): Promise<number> {
  if (walk.retired.length === 0) return 0;
  await new Promise((resolve) => setTimeout(resolve, walk.deps.removalDelayMs ?? 2000));
  let removed = 0;
  for (const cid of new Set(walk.retired)) {
    if (await isBlockReferenced(walk.deps.db, cid)) continue;
    await walk.deps.store.removeEncrypted(cid);
    removed++;
  }
  walk.deps.log(`old blocks: ${removed} removed`);
  return removed;
}
