/**
 * Coffer as a target of ../shared/bench/oidc-provider-anchor (its README: "contract"): the real
 * Coffer app and token endpoint, plus the harness's bench-only routes. The harness names its
 * client `anchor-client` and posts to /token; Coffer's client ids are numbers, so this target
 * registers one client whose secret is the harness's and maps the name to its number before
 * validation. Nothing else differs from `npm start`.
 *
 * Run from a copy of the anchor folder (after its npm ci):
 *   node bench.mjs --target='coffer=/path/to/coffer/node_modules/.bin/node /path/to/coffer/bench/anchor/coffer-target.ts'
 * BENCH_DATABASE_URL=postgres://… selects PostgreSQL (a fresh schema) instead of SQLite;
 * WORKERS=N runs N server processes on the port, as `npm start` does with WORKERS.
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { readConfig } from '../../src/config/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createEmailIndex } from '../../src/keys/blind-index.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { hashSecret } from '../../src/keys/secrets.ts';
import { issueAuthorizationCode } from '../../src/oidc/authorization.ts';
import { issueRefreshToken } from '../../src/oidc/refresh-tokens.ts';
import { createEncryptedStore } from '../../src/storage/index.ts';
import { logInWithWallet } from '../../src/users/user-login.ts';
import { createUserInserter } from '../../src/users/user-repository.ts';

const ANCHOR_CLIENT = 'anchor-client';
const ANCHOR_SECRET = 'anchor-client-secret-0123456789abcdef0123456789abcdef';
const REDIRECT_URI = 'https://rp.example.com/cb';
const USERS = 1000;
const workers = Number(process.env['WORKERS'] ?? '1');

interface State {
  dataDir: string;
  databaseUrl: string | undefined;
  masterKey: string;
  clientId: number;
}

/** Database, client and users, made once (by the primary when there are workers). */
async function prepare(): Promise<State> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'coffer-anchor-'));
  let databaseUrl: string | undefined;
  if (process.env['BENCH_DATABASE_URL']) {
    const schema = `coffer_anchor_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env['BENCH_DATABASE_URL'] });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const url = new URL(process.env['BENCH_DATABASE_URL']);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  }
  const masterKey = randomBytes(32);
  const database = openDatabase({ databaseUrl, dataDir });
  await migrateToLatest(database.db, database.dialect);
  const client = await createClient(database.db, {
    name: 'anchor',
    redirectUris: [REDIRECT_URI],
    grantTypes: ['authorization_code', 'refresh_token'],
  });
  await database.db
    .updateTable('clients')
    .set({ client_secret_hash: hashSecret(ANCHOR_SECRET) })
    .where('client_id', '=', client.client_id)
    .execute();
  const userDeps = {
    db: database.db,
    store: createEncryptedStore({ backend: 'fs', dataDir, masterKey }),
    cipher: createFieldCipher(masterKey),
    emailIndex: createEmailIndex(masterKey),
    emailIndexes: (email: string) => [createEmailIndex(masterKey)(email)],
    insertUser: createUserInserter(database.db, database.dialect),
  };
  for (let i = 0; i < USERS; i++) {
    // Decimal-digit addresses read the same in EIP-55 and lower case, which the harness's check expects.
    const address = `0x${Array.from(randomBytes(40), (b) => String(b % 10)).join('')}`;
    await logInWithWallet(userDeps, client.client_id, address, 1);
  }
  await database.close();
  return { dataDir, databaseUrl, masterKey: masterKey.toString('base64'), clientId: client.client_id };
}

async function serve(state: State): Promise<void> {
  const config = readConfig({
    PORT: process.env['PORT'] ?? '0',
    // DPoP proofs name the URL they are made for (htu).
    PUBLIC_URL: `http://127.0.0.1:${process.env['PORT'] ?? '0'}`,
    DATA_DIR: state.dataDir,
    LOG_LEVEL: 'warn',
    MASTER_KEY: state.masterKey,
    API_RATE_LIMIT: '100000000',
    ...(state.databaseUrl ? { DATABASE_URL: state.databaseUrl } : {}),
  });
  const masterKey = Buffer.from(state.masterKey, 'base64');
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: state.dataDir });
  const numericId = String(state.clientId);
  const users = await database.db
    .selectFrom('users')
    .select(['user_id', 'did', 'wallet_address'])
    .where('tenant_id', '=', state.clientId)
    .execute();

  const app = await buildApp({
    config,
    database,
    masterKey,
    rewriteUrl: (url) => (url === '/token' ? '/v2/openidc/token' : url),
    beforeRoutes: (instance) => {
      instance.addHook('preValidation', async (request) => {
        const body = request.body as Record<string, string> | undefined;
        if (body?.['client_id'] === ANCHOR_CLIENT) body['client_id'] = numericId;
        const auth = request.headers.authorization;
        if (auth?.startsWith('Basic ')) {
          const [id, secret] = Buffer.from(auth.slice(6), 'base64').toString().split(':');
          if (id === ANCHOR_CLIENT) {
            request.headers.authorization = `Basic ${Buffer.from(`${numericId}:${secret}`).toString('base64')}`;
          }
        }
      });
    },
  });

  app.get('/__bench/health', async () => ({ ok: true, node: process.version, database: database.dialect }));
  app.post('/__bench/mint', async (request) => {
    const n = Math.min(10_000, Number((request.query as { n?: string }).n ?? 1));
    const nowSeconds = Math.floor(Date.now() / 1000);
    const codes: string[] = [];
    // A nonce per code, as the harness's oidc-provider server mints them, so the id_tokens compare.
    const authRequest = () => ({
      clientId: state.clientId,
      redirectUri: REDIRECT_URI,
      scope: 'openid',
      state: null,
      nonce: randomBytes(12).toString('base64url'),
      codeChallenge: null,
      prompt: null,
    });
    // One transaction for the lot: minting is set-up, not what is measured.
    await database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < n; i++) {
        const login = { loginType: 'wallet', authTime: nowSeconds };
        codes.push(
          await issueAuthorizationCode(tx, authRequest(), users[i % users.length]!, login, nowSeconds),
        );
      }
      // Minted codes must outlive the run (the harness mints ahead of time).
      await tx
        .updateTable('authorization_codes')
        .set({ expires_at: nowSeconds + 900 })
        .execute();
    });
    return { codes };
  });

  // Refresh tokens as a log-in with offline_access leaves them (bench/refresh-dpop.ts).
  app.post('/__bench/mint-refresh', async (request) => {
    const n = Math.min(200_000, Number((request.query as { n?: string }).n ?? 1));
    const nowSeconds = Math.floor(Date.now() / 1000);
    const tokens: string[] = [];
    await database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < n; i++) {
        const user = users[i % users.length]!;
        tokens.push(
          await issueRefreshToken(
            tx,
            {
              clientId: state.clientId,
              userId: user.user_id,
              scope: 'openid offline_access',
              authTime: nowSeconds,
              loginType: 'wallet',
              did: user.did,
              walletAddress: user.wallet_address,
              jkt: null,
            },
            nowSeconds,
            86400,
          ),
        );
      }
    });
    return { refresh_tokens: tokens };
  });

  await app.listen({ host: '127.0.0.1', port: config.port });
  // A clean exit on the harness's SIGTERM, so --cpu-prof can write its profile.
  process.once('SIGTERM', () => process.exit(0));
}

if (cluster.isPrimary) {
  const state = await prepare();
  if (workers > 1) {
    for (let i = 0; i < workers; i++) cluster.fork({ COFFER_ANCHOR_STATE: JSON.stringify(state) });
    process.once('SIGTERM', () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
      process.exit(0);
    });
  } else {
    await serve(state);
  }
} else {
  await serve(JSON.parse(process.env['COFFER_ANCHOR_STATE']!) as State);
}
