import { createClient } from '../src/clients/client-admin.ts';
import { readConfig } from '../src/config/config.ts';
import { type DatabaseHandle, openDatabase } from '../src/db/database.ts';
import { createEmailIndex } from '../src/keys/blind-index.ts';
import { createFieldCipher } from '../src/keys/field-cipher.ts';
import { issueAuthorizationCode } from '../src/oidc/authorization.ts';
import { createEncryptedStore, type EncryptedStore } from '../src/storage/index.ts';
import { createUserInserter } from '../src/users/user-repository.ts';
import type { UserDeps } from '../src/users/user-service.ts';
import type { BenchServer } from './server.ts';

/**
 * Seeding a benchmark server directly through its database and block store, with the same
 * functions the service uses, so that only the measured requests go over HTTP.
 */
export interface ServerState {
  database: DatabaseHandle;
  store: EncryptedStore;
  users: UserDeps;
}

export async function withServerState<T>(
  server: BenchServer,
  use: (state: ServerState) => Promise<T>,
): Promise<T> {
  const config = readConfig(server.env);
  const masterKey = Buffer.from(config.masterKey!, 'base64');
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const store = createEncryptedStore({ backend: 'fs', dataDir: config.dataDir, masterKey });
  try {
    return await use({
      database,
      store,
      users: {
        db: database.db,
        store,
        cipher: createFieldCipher(masterKey),
        emailIndex: createEmailIndex(masterKey),
        emailIndexes: (email: string) => [createEmailIndex(masterKey)(email)],
        insertUser: createUserInserter(database.db, database.dialect),
      },
    });
  } finally {
    await database.close();
  }
}

export const BENCH_REDIRECT_URI = 'https://rp.bench.example/cb';

export async function createRelyingParty(state: ServerState) {
  const created = await createClient(state.database.db, {
    name: 'Bench RP',
    redirectUris: [BENCH_REDIRECT_URI],
  });
  return { ...created, client_secret: created.client_secret! };
}

/** A one-time code as a finished log-in leaves it, for the given client and user. */
export async function mintCode(
  db: DatabaseHandle['db'],
  clientId: number,
  user: { user_id: number; did: string; wallet_address: string | null },
  ttlSeconds = 60,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const request = {
    clientId,
    redirectUri: BENCH_REDIRECT_URI,
    scope: 'openid',
    state: null,
    nonce: 'n',
    codeChallenge: null,
    prompt: null,
  };
  const code = await issueAuthorizationCode(db, request, user, { loginType: 'wallet', authTime: now }, now);
  if (ttlSeconds !== 60) {
    await db
      .updateTable('authorization_codes')
      .set({ expires_at: now + ttlSeconds })
      .where('client_id', '=', clientId)
      .execute();
  }
  return code;
}

/** The token request for one code, as the contract and RFC 6749 name its fields. */
export function exchangeParams(client: { client_id: number; client_secret: string }, code: string) {
  return {
    grant_type: 'authorization_code',
    code,
    client_id: String(client.client_id),
    client_secret: client.client_secret,
    redirect_uri: BENCH_REDIRECT_URI,
  };
}

/** Exchanges a code over HTTP, as the app would, and returns the access token. */
export async function exchangeForAccessToken(
  server: BenchServer,
  client: { client_id: number; client_secret: string },
  code: string,
): Promise<string> {
  const response = await fetch(`${server.url}/v2/openidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(exchangeParams(client, code)),
  });
  if (!response.ok) throw new Error(`token exchange failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}
