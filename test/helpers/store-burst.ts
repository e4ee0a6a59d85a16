import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { fastBbs } from '../../src/bbs/index.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import type { DatabaseHandle } from '../../src/db/database.ts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import { type LoggedInUser, logInUser } from '../credentials/helpers.ts';
import { type RelyingParty, registerRelyingParty } from '../oidc/flow-helpers.ts';
import { BENCH_CONTEXT, BENCH_CONTEXT_URL, createBenchIssuer } from './credential-factory.ts';
import type { TestServer } from './server.ts';

/**
 * A holder with credentials stored over HTTP against a server process (test/helpers/
 * server-process.ts): a master client's API token stores them, a relying party lets the holder
 * log in (by wallet) and list them, as an app would.
 */
export interface StoreFixture {
  token: string;
  rp: RelyingParty;
  account: PrivateKeyAccount;
  holder: LoggedInUser;
  issue(count: number): Promise<Array<Record<string, unknown>>>;
}

/** What the server answered to a store: the CID and the stored credential, by credential id. */
export type Acknowledged = Map<string, { cid: string; vc: unknown }>;

/** The server as the log-in helpers see it: its address and, for registering a client, the database. */
function asTestServer(url: string, database: DatabaseHandle): TestServer {
  return { url, database } as unknown as TestServer;
}

export async function prepareStoreFixture(url: string, database: DatabaseHandle): Promise<StoreFixture> {
  const { api_token: token } = await createClient(database.db, { name: 'Burst master', master: true });
  await registerContext(database.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));
  const rp = await registerRelyingParty(asTestServer(url, database));
  const account = privateKeyToAccount(generatePrivateKey());
  const holder = await logInUser(asTestServer(url, database), rp, account);
  const issuer = await createBenchIssuer(fastBbs);
  return {
    token,
    rp,
    account,
    holder,
    issue: (count) =>
      Promise.all(Array.from({ length: count }, () => issuer.issue(holder.did, 5))) as Promise<
        Array<Record<string, unknown>>
      >,
  };
}

export async function storeOne(
  url: string,
  token: string,
  vc: Record<string, unknown>,
): Promise<{ status: number; cid?: string; stored?: unknown }> {
  const response = await fetch(`${url}/v1/vc/issuer/store`, {
    method: 'POST',
    headers: { 'x-api-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ vc }),
  });
  const body = (await response.json()) as { data?: { cid: string; vc: unknown } };
  return { status: response.status, cid: body.data?.cid, stored: body.data?.vc };
}

/**
 * A burst of durable writes that goes on until `stop`: half the lanes store the given credentials
 * (then create users once they run out), the other half create users (a profile block and a row
 * each). Every 2xx answer is recorded the moment it arrives.
 */
export function startStoreBurst(
  url: string,
  token: string,
  pending: Array<Record<string, unknown>>,
  lanes: number,
) {
  const acknowledged: Acknowledged = new Map();
  /** Users created: user id → e-mail address. */
  const users = new Map<number, string>();
  const failures: string[] = [];
  let stopped = false;
  let sequence = 0;
  const createUser = async () => {
    const email = `burst.${sequence++}.${Date.now()}@backup.example`;
    const response = await fetch(`${url}/v1/user/create`, {
      method: 'POST',
      headers: { 'x-api-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ profile: { email_address: email, first_name: 'Burst', last_name: 'User' } }),
    });
    const body = (await response.json()) as { data?: { user_id: number } };
    if (response.status === 201) users.set(body.data!.user_id, email);
    else failures.push(`user create: ${response.status}`);
  };
  const done = Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (!stopped) {
        try {
          if (lane % 2 === 1 || pending.length === 0) {
            await createUser();
            continue;
          }
          const vc = pending.pop()!;
          const result = await storeOne(url, token, vc);
          if (result.status >= 200 && result.status < 300)
            acknowledged.set(vc['id'] as string, { cid: result.cid!, vc: result.stored });
          else failures.push(`store: ${result.status}`);
        } catch (error) {
          failures.push((error as Error).message);
          return;
        }
      }
    }),
  );
  return {
    acknowledged,
    users,
    failures,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/**
 * Reads the holder's credentials back through the API after a fresh log-in at the server's
 * address: the list (every credential block), then a presentation of one claim of each of the
 * given credentials, one request each (its prepared-statements block too).
 */
export async function readBackThroughApi(
  url: string,
  fixture: StoreFixture,
  database: DatabaseHandle,
  ids: Iterable<string>,
): Promise<{ listed: Map<string, unknown>; presented: string[]; failed: string[] }> {
  const holder = await logInUser(asTestServer(url, database), fixture.rp, fixture.account);
  const response = await fetch(`${url}/v1/openidc/credentials`, { headers: holder.bearer });
  if (response.status !== 200)
    throw new Error(`listing answered ${response.status}: ${await response.text()}`);
  const { data } = (await response.json()) as { data: Array<{ id: string }> };
  const presented: string[] = [];
  const failed: string[] = [];
  for (const id of ids) {
    const proof = await fetch(`${url}/v1/openidc/credentials/proof`, {
      method: 'POST',
      headers: { ...holder.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({
        vcIdFields: { [id]: ['/credentialSubject/claim_0'] },
        options: { presentationHeader: 'read-back' },
      }),
    });
    const body = (await proof.json()) as { data?: { credentials: Array<{ id: string }> } };
    if (proof.status === 200 && body.data?.credentials[0]?.id === id) presented.push(id);
    else failed.push(`${id}: ${proof.status}`);
  }
  return { listed: new Map(data.map((vc) => [vc.id, vc])), presented, failed };
}
