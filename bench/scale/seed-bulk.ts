import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Insertable, type Kysely, sql } from 'kysely';
import { createClient } from '../../src/clients/client-admin.ts';
import { credentialContext, preparedContext } from '../../src/credentials/credential-service.ts';
import type { Database } from '../../src/db/schema.ts';
import { createEmailIndex } from '../../src/keys/blind-index.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { generateHolderKey } from '../../src/keys/holder-key.ts';
import { LIST_SIZE } from '../../src/status/status-list-bits.ts';
import { computeCid, createEnvelopeCipher, encodeValue } from '../../src/storage/index.ts';
import { holderKeyContext, profileContext } from '../../src/users/user-service.ts';
import { historyContext } from '../../src/wallet/wallet-history.ts';
import { withServerState } from '../seed.ts';
import type { BenchServer } from '../server.ts';

/**
 * Bulk seeding for the scale benchmark, straight into the server's database and block store: rows
 * go in as multi-row INSERTs of BATCH rows inside one transaction per chunk of accounts, blocks are
 * sealed with the server's own envelope cipher and written where the fs backend keeps them (same
 * bytes, same CID, same shard), without the per-block fsync the service pays. Growing from one size
 * to the next adds only what is missing, counted from the database.
 *
 * A size N means N credentials held by N / CREDENTIALS_PER_ACCOUNT accounts (each a profile block,
 * a sealed holder key, an e-mail index), N wallet history rows (one arrival per credential), and,
 * at the bench issuer, N offers (issued) with N issued-credential rows holding N status-list entries.
 */
export const CREDENTIALS_PER_ACCOUNT = 10;
/** Rows per INSERT: well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const BATCH = 500;
/** Accounts per transaction. */
const CHUNK = 2_000;
const FILLER_TENANT = 'Bench scale tenant';
/** Entries a status list takes before the issuer opens a new one (an eighth, as issuer/status-lists.ts). */
const FILL_LIMIT = LIST_SIZE / 8;

/**
 * One credential of the pool that filler accounts hold: the value as the service stores it (after
 * parsing and verifying it once, through storeCredential) and its row's columns.
 */
export interface PoolCredential {
  stored: unknown;
  /** Its prepared bbs-2023 statements (ldp_vc), as the service stored them beside it. */
  prepared: unknown;
  credential_id: string;
  content_hash: string;
  format: string;
}

export interface SeedCounts {
  accounts: number;
  credentials: number;
  history: number;
  offers: number;
  statusEntries: number;
}

async function insertMany<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  rows: Insertable<Database[T]>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    await db
      .insertInto(table)
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's insert types do not follow a generic table name
      .values(rows.slice(i, i + BATCH) as any)
      .execute();
  }
}

const count = async (query: Promise<{ n: number | string | bigint } | undefined>) =>
  Number((await query)?.n ?? 0);

/** What is seeded so far, from the database. */
export async function seededCounts(db: Kysely<Database>, tenantId: number, issuerClientId: number) {
  const accounts = await count(
    db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst() as Promise<{ n: number }>,
  );
  const credentials = await count(
    db
      .selectFrom('credentials')
      .innerJoin('users', 'users.user_id', 'credentials.user_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('users.tenant_id', '=', tenantId)
      .executeTakeFirst() as Promise<{ n: number }>,
  );
  const history = await count(
    db
      .selectFrom('wallet_history')
      .innerJoin('users', 'users.user_id', 'wallet_history.user_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('users.tenant_id', '=', tenantId)
      .executeTakeFirst() as Promise<{ n: number }>,
  );
  const offers = await count(
    db
      .selectFrom('issuer_offers')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('client_id', '=', issuerClientId)
      .where('id', 'like', 'scale-%')
      .executeTakeFirst() as Promise<{ n: number }>,
  );
  const statusEntries = await count(
    db
      .selectFrom('issued_credentials')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('client_id', '=', issuerClientId)
      .where('id', 'like', 'scale-%')
      .executeTakeFirst() as Promise<{ n: number }>,
  );
  return { accounts, credentials, history, offers, statusEntries } satisfies SeedCounts;
}

/** The tenant whose accounts fill the database (made on first use). */
export async function fillerTenant(server: BenchServer): Promise<number> {
  return withServerState(server, async ({ database }) => {
    const found = await database.db
      .selectFrom('clients')
      .select('client_id')
      .where('name', '=', FILLER_TENANT)
      .executeTakeFirst();
    if (found) return found.client_id;
    return (await createClient(database.db, { name: FILLER_TENANT, redirectUris: [] })).client_id;
  });
}

/**
 * Grows the seeded data to `size` credentials (and what goes with them, see above). `pool` holds
 * the distinct credentials accounts are given, CREDENTIALS_PER_ACCOUNT different ones each.
 */
export async function growTo(
  server: BenchServer,
  options: { size: number; tenantId: number; issuerClientId: number; pool: PoolCredential[] },
): Promise<SeedCounts> {
  if (options.pool.length < CREDENTIALS_PER_ACCOUNT)
    throw new Error(`the credential pool needs at least ${CREDENTIALS_PER_ACCOUNT} credentials`);
  const masterKey = Buffer.from(server.env['MASTER_KEY']!, 'base64');
  const envelopes = createEnvelopeCipher(masterKey);
  const fields = createFieldCipher(masterKey);
  const emailIndex = createEmailIndex(masterKey);
  const blocks = path.join(server.env['DATA_DIR']!, 'blocks');

  /** An encrypted block as the fs backend writes it (content store: dag-cbor envelope). */
  async function putBlock(value: unknown, context: { owner: string; kind: string }): Promise<string> {
    const bytes = encodeValue(envelopes.seal(value, context), 'dag-cbor');
    const name = (await computeCid(bytes, 'dag-cbor')).toString();
    const shard = path.join(blocks, name.slice(-3, -1));
    await mkdir(shard, { recursive: true });
    await writeFile(path.join(shard, name), bytes);
    return name;
  }

  return withServerState(server, async ({ database }) => {
    const db = database.db;
    const done = await seededCounts(db, options.tenantId, options.issuerClientId);
    const wantedAccounts = Math.max(1, Math.ceil(options.size / CREDENTIALS_PER_ACCOUNT));
    const now = new Date().toISOString();
    for (let first = done.accounts; first < wantedAccounts; first += CHUNK) {
      const last = Math.min(wantedAccounts, first + CHUNK);
      const accounts: Array<{ i: number; did: string; row: Insertable<Database['users']> }> = [];
      for (let i = first; i < last; i++) {
        const holder = generateHolderKey();
        const email = `scale.${i}@bench.example`;
        accounts.push({
          i,
          did: holder.did,
          row: {
            tenant_id: options.tenantId,
            email_index: emailIndex(email),
            wallet_address: null,
            wallet_chain_id: null,
            profile_cid: await putBlock(
              { email_address: email, first_name: 'Ada', last_name: `Lovelace ${i}`, language_primary: 'en' },
              profileContext(holder.did),
            ),
            did: holder.did,
            holder_key_sealed: fields.encrypt(
              JSON.stringify(holder.privateJwk),
              holderKeyContext(holder.did),
            ),
            created_at: now,
          },
        });
      }
      const credentialRows: Array<{
        did: string;
        credential: PoolCredential;
        cid: string;
        preparedCid: string | null;
      }> = [];
      const history: Insertable<Database['wallet_history']>[] = [];
      for (const account of accounts) {
        for (let j = 0; j < CREDENTIALS_PER_ACCOUNT; j++) {
          const credential = options.pool[(account.i * CREDENTIALS_PER_ACCOUNT + j) % options.pool.length]!;
          credentialRows.push({
            did: account.did,
            credential,
            cid: await putBlock(credential.stored, credentialContext(account.did)),
            preparedCid:
              credential.prepared === undefined
                ? null
                : await putBlock(credential.prepared, preparedContext(account.did)),
          });
        }
      }
      await db.transaction().execute(async (tx) => {
        await insertMany(
          tx,
          'users',
          accounts.map((a) => a.row),
        );
        // The ids just given, read back by DID (unique, indexed).
        const ids = new Map<string, number>();
        for (let k = 0; k < accounts.length; k += BATCH) {
          const rows = await tx
            .selectFrom('users')
            .select(['user_id', 'did'])
            .where(
              'did',
              'in',
              accounts.slice(k, k + BATCH).map((a) => a.did),
            )
            .execute();
          for (const row of rows) ids.set(row.did, row.user_id);
        }
        await insertMany(
          tx,
          'credentials',
          credentialRows.map(({ did, credential, cid, preparedCid }) => ({
            user_id: ids.get(did)!,
            credential_id: credential.credential_id,
            cid,
            content_hash: credential.content_hash,
            issuer_client_id: null,
            created_at: now,
            format: credential.format,
            prepared_cid: preparedCid,
          })),
        );
        for (const { did, credential } of credentialRows) {
          const event = {
            kind: 'arrival',
            at: now,
            credential: { id: credential.credential_id, format: credential.format, types: [] },
            from: { name: '', via: 'api', identifier: String(options.tenantId) },
          };
          history.push({
            user_id: ids.get(did)!,
            kind: 'arrival' as const,
            at: now,
            detail_sealed: fields.encrypt(JSON.stringify(event), historyContext(did)),
          });
        }
        await insertMany(tx, 'wallet_history', history);
      });
    }
    await seedIssued(db, options.issuerClientId, done.offers, options.size);
    // A bulk load leaves the planner with the statistics of the empty tables until autovacuum
    // comes by; a service grown by traffic has them, so the measured requests should too.
    await sql`analyze`.execute(db);
    return seededCounts(db, options.tenantId, options.issuerClientId);
  });
}

/** A stable list id per filler list number, shaped as the issuer's (22 base64url characters). */
const listId = (k: number) =>
  createHash('sha256').update(`scale-status-list/${k}`).digest('base64url').slice(0, 22);

/** The first filler status list (what the status-list fetch reads). */
export const firstFillerList = () => listId(0);

/**
 * Offers the issuer made and redeemed, each with its issued credential holding one entry of a Token
 * Status List; a list takes FILL_LIMIT entries, spread over its LIST_SIZE indexes, as the issuer does.
 */
async function seedIssued(db: Kysely<Database>, clientId: number, from: number, to: number) {
  const issuer = await db
    .selectFrom('issuers')
    .select('signing_key_id')
    .where('client_id', '=', clientId)
    .executeTakeFirstOrThrow();
  const now = new Date().toISOString();
  const later = new Date(Date.now() + 365 * 86_400_000).toISOString();
  const emptyList = Buffer.alloc(LIST_SIZE / 4).toString('base64');
  for (let first = from; first < to; first += CHUNK * CREDENTIALS_PER_ACCOUNT) {
    const last = Math.min(to, first + CHUNK * CREDENTIALS_PER_ACCOUNT);
    await db.transaction().execute(async (tx) => {
      const lists: Insertable<Database['status_lists']>[] = [];
      for (let k = Math.floor(first / FILL_LIMIT); k <= Math.floor((last - 1) / FILL_LIMIT); k++) {
        if (k * FILL_LIMIT >= first)
          lists.push({
            id: listId(k),
            client_id: clientId,
            kind: 'token',
            size: LIST_SIZE,
            bytes: emptyList,
            signing_key_id: issuer.signing_key_id,
            updated_at: now,
          });
      }
      await insertMany(tx, 'status_lists', lists);
      const offers: Insertable<Database['issuer_offers']>[] = [];
      const issued: Insertable<Database['issued_credentials']>[] = [];
      for (let n = first; n < last; n++) {
        const id = `scale-${n}`;
        offers.push({
          id,
          client_id: clientId,
          configuration_ids: '["person-sd-jwt"]',
          grant_type: 'pre-authorized_code' as const,
          pre_authorized_code_hash: randomBytes(32).toString('base64url'),
          issuer_state: null,
          tx_code_hash: null,
          tx_code_spec: null,
          claims_sealed: null,
          user_id: null,
          status: 'issued' as const,
          callback_url: null,
          transaction_id_hash: null,
          deferred_sealed: null,
          created_at: now,
          expires_at: now,
          redeemed_at: now,
        });
        const slot = n % FILL_LIMIT;
        issued.push({
          id,
          client_id: clientId,
          offer_id: id,
          configuration_id: 'person-sd-jwt',
          format: 'dc+sd-jwt',
          status: 'valid' as const,
          status_list_id: listId(Math.floor(n / FILL_LIMIT)),
          status_index: slot * 8 + ((slot * 5) % 8),
          credential_hash: randomBytes(32).toString('base64url'),
          notification_id: null,
          issued_at: now,
          expires_at: later,
        });
      }
      await insertMany(tx, 'issuer_offers', offers);
      await insertMany(tx, 'issued_credentials', issued);
      for (let k = Math.floor(first / FILL_LIMIT); k <= Math.floor((last - 1) / FILL_LIMIT); k++) {
        const used = Math.min(FILL_LIMIT, last - k * FILL_LIMIT);
        await tx.updateTable('status_lists').set({ used }).where('id', '=', listId(k)).execute();
      }
    });
  }
}
