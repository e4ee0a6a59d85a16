/**
 * `npm run bench -- --only=scale [--sizes=1e3,1e5,1e6 --db=sqlite,postgres --duration=10]` (issue 44,
 * DESIGN.md "Scale"): one server process per database, grown in bulk from one size to the next
 * (bench/scale/seed-bulk.ts), and at each size the per-request costs over HTTP (p50, p99, server CPU
 * per request), the duration of the data operations per 10⁵ seeded rows, the bytes per account and
 * per credential, and the server's RSS. One table per database: a row per figure, a column per
 * size, and the ratio of the largest size to the smallest.
 *
 * BENCH_SCALE_SIZES sets the sizes when --sizes is absent; BENCH_SCALE_CONNECTIONS (10) the
 * concurrency of every measured request; BENCH_SCALE_STORES (7,000) the distinct credentials
 * each size's store measurement can send; BENCH_SCALE_CODES (60,000) the log-in codes minted per
 * size; BENCH_SCALE_POOL (16) the distinct signed credentials per format that filler accounts hold;
 * BENCH_SCALE_DATA_OPS=0 skips the CLI's data operations (gc, backup, rotate) and the byte counts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { fastBbs } from '../src/bbs/index.ts';
import { credentialContext, readPrepared } from '../src/credentials/credential-service.ts';
import type { SecuredDocument } from '../src/formats/ldp-vc/bbs-2023/shared.ts';
import { SESSION_COOKIE } from '../src/interaction/session-cookie.ts';
import { insertSession } from '../src/interaction/session-repository.ts';
import { hashSecret } from '../src/keys/secrets.ts';
import { logInWithWallet } from '../src/users/user-login.ts';
import { createBenchIssuer } from '../test/helpers/credential-factory.ts';
import { holderJwkOf } from '../test/helpers/issuers/holder.ts';
import { makeIssuerIdentity } from '../test/helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer } from '../test/helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc } from '../test/helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc } from '../test/helpers/issuers/sd-jwt-issuer.ts';
import { timedCli } from './data-operations.ts';
import { cofferTarget, preAuthorizedIssuance, proofKeys } from './issuer.ts';
import {
  fillerTenant,
  firstFillerList,
  growTo,
  type PoolCredential,
  type SeedCounts,
} from './scale/seed-bulk.ts';
import { type Holder, prepareHolder, prepareProofRequests } from './scenarios/credentials.ts';
import {
  createRelyingParty,
  exchangeForAccessToken,
  exchangeParams,
  mintCode,
  withServerState,
} from './seed.ts';
import { type BenchDatabase, type BenchServer, startBenchServer } from './server.ts';
import { measureRoundTrips, WARM_UP_SECONDS } from './timing.ts';
import { prepareVerifier, sdJwtKind } from './verifier.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/** `1e3,1e5` or `1000,100000` → [1000, 100000]. */
export const parseSizes = (text: string) =>
  text.split(',').map((size) => {
    const n = Number(size.trim());
    if (!Number.isInteger(n) || n < 1) throw new Error(`--sizes: ${size} is not a whole number ≥ 1`);
    return n;
  });

const TEN_CLAIMS = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`claim_${i}`, `value ${i}`]));

/** `perFormat` distinct credentials of each of the four formats, issued to `did`. */
async function mixedCredentials(did: string, perFormat: number): Promise<Array<SecuredDocument | string>> {
  const bbs = await createBenchIssuer(fastBbs);
  const identity = await makeIssuerIdentity('Bench scale issuer');
  const jwtVc = await createJwtVcIssuer();
  const holderJwk = holderJwkOf(did);
  const credentials: Array<SecuredDocument | string> = [];
  for (let i = 0; i < perFormat; i++) {
    credentials.push(await bbs.issue(did, 10));
    credentials.push(
      await issueSdJwtVc(identity, {
        holderJwk,
        claims: { ...TEN_CLAIMS, claim_0: `person ${i}` },
        disclosureFrame: { _sd: Object.keys(TEN_CLAIMS) },
      }),
    );
    credentials.push(await issueMdoc(identity, { deviceJwk: holderJwk }));
    credentials.push(await jwtVc.issue({ subject: did }));
  }
  return credentials;
}

/** The pool holder's credentials as the service stored them: what filler accounts get re-encrypted. */
export async function credentialPool(
  server: BenchServer,
  holder: Holder,
  perFormat: number,
): Promise<PoolCredential[]> {
  await holder.seed(await mixedCredentials(holder.did, perFormat));
  return withServerState(server, async ({ database, store }) => {
    const rows = await database.db
      .selectFrom('credentials')
      .select(['credential_id', 'cid', 'content_hash', 'format', 'prepared_cid'])
      .where('user_id', '=', holder.user.user_id)
      .execute();
    return Promise.all(
      rows.map(async (row) => ({
        credential_id: row.credential_id,
        content_hash: row.content_hash,
        format: row.format,
        stored: await store.getEncrypted(row.cid, credentialContext(holder.did)),
        prepared: await readPrepared(store, holder.did, row.prepared_cid),
      })),
    );
  });
}

/** A browser session for the holder's account, as a finished wallet log-in leaves it. */
async function walletSession(server: BenchServer, holder: Holder): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  await withServerState(server, ({ database }) =>
    insertSession(database.db, {
      id_hash: hashSecret(sessionId),
      user_id: holder.user.user_id,
      tenant_id: holder.user.tenant_id,
      login_type: 'wallet',
      auth_time: Math.floor(Date.now() / 1000),
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    }),
  );
  return `${SESSION_COOKIE}=${sessionId}`;
}

/** Codes as a log-in leaves them, for one account of a fresh relying party. */
async function mintCodes(server: BenchServer, count: number) {
  return withServerState(server, async (state) => {
    const client = await createRelyingParty(state);
    const user = await logInWithWallet(
      state.users,
      client.client_id,
      `0x${randomBytes(20).toString('hex')}`,
      1,
    );
    const codes: string[] = [];
    await state.database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < count; i++) codes.push(await mintCode(tx, client.client_id, user));
      // An hour to use them: one update at the end (mintCode's ttl updates every code of the client).
      await tx
        .updateTable('authorization_codes')
        .set({ expires_at: Math.floor(Date.now() / 1000) + 3600 })
        .where('client_id', '=', client.client_id)
        .execute();
    });
    return { client, codes };
  });
}

/** Fails unless the response has the status wanted; reads the body so the connection is reused. */
async function expect(response: Promise<Response>, status: number, what: string): Promise<void> {
  const r = await response;
  const body = await r.arrayBuffer();
  if (r.status !== status)
    throw new Error(`${what}: ${r.status} ${Buffer.from(body).toString('utf8').slice(0, 200)}`);
}

async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? await treeBytes(full) : (await stat(full)).size;
  }
  return total;
}

/** Bytes of the server's database: SQLite's file and WAL, or every relation of the PostgreSQL schema. */
async function databaseBytes(server: BenchServer): Promise<number> {
  const url = server.env['DATABASE_URL'];
  if (!url) {
    const file = path.join(server.env['DATA_DIR']!, 'coffer.sqlite');
    const sizes = await Promise.all(
      [file, `${file}-wal`].map((f) =>
        stat(f).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    return sizes.reduce((a, b) => a + b, 0);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind in ('r', 'm')`,
    );
    return Number(rows[0].bytes);
  } finally {
    await client.end();
  }
}

/** Sequential scans and the rows they read, per table of the PostgreSQL schema (cumulative). */
async function sequentialScans(server: BenchServer): Promise<Map<string, { scans: number; rows: number }>> {
  const scans = new Map<string, { scans: number; rows: number }>();
  const url = server.env['DATABASE_URL'];
  if (!url) return scans;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Statistics reach the views when a backend reports them (at most a second late).
    await new Promise((r) => setTimeout(r, 1500));
    const { rows } = await client.query(
      `select relname, seq_scan, seq_tup_read from pg_stat_user_tables where schemaname = current_schema()`,
    );
    for (const row of rows)
      scans.set(row.relname, { scans: Number(row.seq_scan), rows: Number(row.seq_tup_read) });
  } finally {
    await client.end();
  }
  return scans;
}

/**
 * The tables read by sequential scans during the measured requests, most rows first: a table the
 * seeding grows that shows up here is read whole by some request.
 */
function scanReport(
  before: Map<string, { scans: number; rows: number }>,
  after: Map<string, { scans: number; rows: number }>,
): string {
  return [...after]
    .map(([table, a]) => ({
      table,
      scans: a.scans - (before.get(table)?.scans ?? 0),
      rows: a.rows - (before.get(table)?.rows ?? 0),
    }))
    .filter((d) => d.rows > 0)
    .sort((x, y) => y.rows - x.rows)
    .slice(0, 8)
    .map((d) => `${d.table} ${d.scans} scans, ${d.rows} rows`)
    .join('; ');
}

/** One figure per size, in the order of the sizes. */
type Figures = Map<string, number[]>;

export async function runScaleBenchmark(options: {
  database: BenchDatabase;
  sizes: number[];
  duration: number;
  connections?: number;
  warmUpSeconds?: number;
}): Promise<string> {
  const connections = options.connections ?? env('BENCH_SCALE_CONNECTIONS', 10);
  const warmUp = options.warmUpSeconds ?? WARM_UP_SECONDS;
  const sizes = [...options.sizes].sort((a, b) => a - b);
  const figures: Figures = new Map();
  const notes = new Set<string>();
  const seeded: Array<{ rows: number; accounts: number; credentials: number }> = [];
  const table = () =>
    formatTable(options.database, sizes, figures, connections, options.duration, [...notes]);
  // A 10⁶ run takes hours: the table so far goes to stderr as figures come, so a stopped run keeps it.
  const tableSoFar = () => console.error(table());
  const put = (name: string, index: number, value: number) => {
    const row = figures.get(name) ?? sizes.map(() => Number.NaN);
    row[index] = value;
    figures.set(name, row);
  };
  const server = await startBenchServer(options.database, { RESULT_RETENTION: '0' });
  const work = await mkdtemp(path.join(tmpdir(), 'coffer-scale-'));
  try {
    // The tenants and accounts the measured requests use, made once: the filler grows around them.
    const target = await cofferTarget(server);
    const issuerClientId = await withServerState(server, async ({ database }) =>
      Number(
        (await database.db.selectFrom('issuers').select('client_id').executeTakeFirstOrThrow()).client_id,
      ),
    );
    const keys = await proofKeys(16);
    const verify = await prepareVerifier(server);
    const verification = await sdJwtKind();
    const tenantId = await fillerTenant(server);
    const pool = await credentialPool(server, await prepareHolder(server), env('BENCH_SCALE_POOL', 16));
    // Its own person: the other holders share an address, and the store holder gathers thousands
    // of credentials, which the wallet page of 'the account with 20' would otherwise show.
    const listHolder = await prepareHolder(server, '0x00000000000000000000000000000000000000d2');
    await listHolder.seed(await mixedCredentials(listHolder.did, 5));
    const cookie = await walletSession(server, listHolder);
    const proofs = await prepareProofRequests(server, 10, 8);
    const storeHolder = await prepareHolder(server);
    const storeIssuer = await createBenchIssuer(fastBbs);
    const bearer = { authorization: `Bearer ${listHolder.accessToken}` };
    let issued = 0;
    let proofNext = 0;

    for (const [index, size] of sizes.entries()) {
      const seedStart = performance.now();
      const counts: SeedCounts = await growTo(server, { size, tenantId, issuerClientId, pool });
      put('seeding this step, s', index, (performance.now() - seedStart) / 1000);
      put('accounts seeded', index, counts.accounts);
      put('credentials seeded', index, counts.credentials);
      console.error(`scale ${options.database} ${size}: seeded ${JSON.stringify(counts)}`);

      // Fresh codes and store bodies per size: both are used up by their requests.
      const minted = await mintCodes(server, env('BENCH_SCALE_CODES', 60_000));
      const userinfoToken = await exchangeForAccessToken(server, minted.client, minted.codes.pop()!);
      const storeBodies: string[] = [];
      for (let i = 0; i < env('BENCH_SCALE_STORES', 7000); i++)
        storeBodies.push(JSON.stringify({ vc: await storeIssuer.issue(storeHolder.did, 10) }));
      let storeNext = 0;
      // Seeding and signing held this loop for minutes, while the server closed the idle keep-alive sockets;
      // one turn of the loop lets fetch see those closes before it reuses a socket.
      await new Promise((resolve) => setTimeout(resolve, 100));

      const requests: Array<[string, () => Promise<void>]> = [
        [
          'log-in code → token',
          async () => {
            const code = minted.codes.pop();
            if (!code) throw new Error('the minted codes ran out; raise BENCH_SCALE_CODES');
            await expect(
              fetch(`${server.url}/v2/openidc/token`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(exchangeParams(minted.client, code)),
              }),
              200,
              'token',
            );
          },
        ],
        [
          'userinfo',
          () =>
            expect(
              fetch(`${server.url}/v2/openidc/user`, {
                headers: { authorization: `Bearer ${userinfoToken}` },
              }),
              200,
              'userinfo',
            ),
        ],
        [
          'credential list (20)',
          () => expect(fetch(`${server.url}/v1/openidc/credentials`, { headers: bearer }), 200, 'list'),
        ],
        [
          'proof (bbs-2023, 10 claims)',
          () =>
            expect(
              fetch(`${server.url}${proofs.path}`, {
                method: 'POST',
                headers: proofs.headers,
                body: proofs.bodies[proofNext++ % proofs.bodies.length]!,
              }),
              200,
              'proof',
            ),
        ],
        [
          'store (bbs-2023, 10 claims)',
          () => {
            const n = storeNext++;
            // A credential sent again takes the idempotent path (no proof check): flagged, not mixed in silently.
            if (n >= storeBodies.length)
              notes.add(
                'store: the distinct credentials ran out and some were re-sent; raise BENCH_SCALE_STORES',
              );
            return expect(
              fetch(`${server.url}/v1/vc/issuer/store`, {
                method: 'POST',
                headers: { 'x-api-token': storeHolder.apiToken, 'content-type': 'application/json' },
                body: storeBodies[n % storeBodies.length]!,
              }),
              n >= storeBodies.length ? 200 : 201,
              'store',
            );
          },
        ],
        [
          'pre-authorized issuance (dc+sd-jwt)',
          () => {
            const n = issued++;
            return preAuthorizedIssuance(target, 'dc+sd-jwt', keys[n % keys.length]!, n);
          },
        ],
        ['verification (dc+sd-jwt)', () => verify(verification)],
        [
          'status-list fetch',
          () => expect(fetch(`${server.url}/v1/status-lists/${firstFillerList()}`), 200, 'status list'),
        ],
        [
          'wallet page',
          () => expect(fetch(`${server.url}/wallet`, { headers: { cookie } }), 200, 'wallet page'),
        ],
      ];
      const scansBefore = await sequentialScans(server);
      for (const [name, roundTrip] of requests) {
        const r = await measureRoundTrips(server, roundTrip, connections, options.duration, warmUp);
        put(`${name}: p50 ms`, index, r.p50);
        put(`${name}: p99 ms`, index, r.p99);
        put(`${name}: server CPU ms`, index, r.cpuMs);
        if (r.failures > 0) notes.add(`${name}: ${r.failures} failed round trips at ${size}`);
        console.error(`scale ${options.database} ${size}: ${name} p50 ${r.p50.toFixed(2)} ms`);
      }

      const scanned = scanReport(scansBefore, await sequentialScans(server));
      if (scanned) notes.add(`sequential scans during the requests at ${size}: ${scanned}`);
      // The requests' figures before the CLI's runs, which at 10⁶ take most of an hour.
      tableSoFar();

      // BENCH_SCALE_DATA_OPS=0 measures the requests only (a re-run of a size's requests).
      if (env('BENCH_SCALE_DATA_OPS', 1) === 0) continue;

      // The CLI's start (about a second) and the setup's own rows are fixed costs: the growth from the
      // previous size is what scales, so durations and bytes are also given per row added since then.
      const rows =
        counts.accounts + counts.credentials + counts.history + counts.offers + counts.statusEntries;
      const previous = index === 0 ? undefined : seeded[index - 1]!;
      seeded.push({ rows, accounts: counts.accounts, credentials: counts.credentials });
      type Per = 'rows' | 'accounts' | 'credentials';
      const marginal = (name: string, value: number, per: Array<[Per, string]>, scale = 1) => {
        const last = figures.get(name)?.[index - 1];
        put(name, index, value);
        for (const [count, unit] of per) {
          const grown = previous && last !== undefined ? seeded[index]![count] - previous[count] : 0;
          put(`${name} per ${unit} added`, index, grown > 0 ? ((value - last!) / grown) * scale : Number.NaN);
        }
      };
      const gc = await timedCli(server, {}, 'storage', 'gc', '--dry-run');
      marginal('storage gc --dry-run, ms', gc.ms, [['rows', '10⁵ rows']], 1e5);
      const archive = path.join(work, `scale-${size}.backup`);
      const backup = await timedCli(
        server,
        {},
        'backup',
        '--out',
        archive,
        ...(options.database === 'postgres' ? ['--blocks-only'] : []),
      );
      await rm(archive, { force: true });
      marginal(
        `backup${options.database === 'postgres' ? ' --blocks-only' : ''}, ms`,
        backup.ms,
        [['rows', '10⁵ rows']],
        1e5,
      );
      const newKey = randomBytes(32).toString('base64');
      const keyFile = path.join(work, 'new.key');
      await writeFile(keyFile, `${newKey}\n`, { mode: 0o600 });
      const ring = { MASTER_KEY: newKey, MASTER_KEY_PREVIOUS: server.env['MASTER_KEY']! };
      const rotate = await timedCli(
        server,
        ring,
        'master-key',
        'rotate',
        '--new-key-file',
        keyFile,
        '--dry-run',
      );
      marginal('master-key rotate --dry-run, ms', rotate.ms, [['rows', '10⁵ rows']], 1e5);

      const dbBytes = await databaseBytes(server);
      const blockBytes = await treeBytes(path.join(server.env['DATA_DIR']!, 'blocks'));
      const perGrowth: Array<[Per, string]> = [
        ['accounts', 'account'],
        ['credentials', 'credential'],
      ];
      marginal('database bytes', dbBytes, perGrowth);
      marginal('block-store bytes', blockBytes, perGrowth);
      put('server RSS MiB', index, await server.rssMiB());
      put('server peak RSS MiB', index, await server.peakRssMiB());
      tableSoFar();
    }
    return table();
  } finally {
    await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

const cell = (v: number) =>
  Number.isNaN(v)
    ? '–'
    : Number.isInteger(v)
      ? String(v)
      : Math.abs(v) >= 1000
        ? v.toFixed(0)
        : Math.abs(v) >= 10
          ? v.toFixed(1)
          : v.toFixed(2);

const sizeName = (n: number) => {
  const exponent = Math.log10(n);
  return Number.isInteger(exponent) ? `10^${exponent}` : String(n);
};

/** The last figure over the first one there is (figures of growth have none at the first size). */
function ratio(values: number[]): string {
  const known = values.filter((v) => !Number.isNaN(v));
  return known.length > 1 ? `${(known.at(-1)! / known[0]!).toFixed(2)}×` : '–';
}

export function formatTable(
  database: BenchDatabase,
  sizes: number[],
  figures: Figures,
  connections: number,
  duration: number,
  notes: string[],
): string {
  const first = sizeName(sizes[0]!);
  const last = sizeName(sizes.at(-1)!);
  const header = ['measurement', ...sizes.map(sizeName), `ratio ${last}/${first}`];
  const rows = [...figures].map(([name, values]) => [name, ...values.map(cell), ratio(values)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    `scale on ${database}: size = credentials (accounts = size / 10, plus as many offers, status entries and history rows); requests at ${connections} connections for ${duration} s each`,
    '',
    line(header),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map(line),
    ...(notes.length ? ['', ...notes.map((n) => `note: ${n}`)] : []),
  ].join('\n');
}
