import { logInWithWallet } from '../../src/users/user-login.ts';
import type { UserIdentity } from '../../src/users/user-repository.ts';
import type { Scenario } from '../scenario.ts';
import {
  createRelyingParty,
  exchangeForAccessToken,
  exchangeParams,
  mintCode,
  withServerState,
} from '../seed.ts';
import type { BenchServer } from '../server.ts';

const CODES = 120_000;

/**
 * Codes as a log-in leaves them, made directly in the server's database before the run (the
 * same function the interaction uses), so only the exchange is timed.
 */
interface Minted {
  client: { client_id: number; client_secret: string };
  codes: string[];
}

async function mintCodes(server: BenchServer): Promise<Minted> {
  return withServerState(server, async (state) => {
    const client = await createRelyingParty(state);
    const users: UserIdentity[] = [];
    for (let i = 0; i < 100; i++) {
      users.push(
        await logInWithWallet(
          state.users,
          client.client_id,
          `0x${(i + 1).toString(16).padStart(40, '0')}`,
          1,
        ),
      );
    }
    const codes: string[] = [];
    await state.database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < CODES; i++)
        codes.push(await mintCode(tx, client.client_id, users[i % users.length]!));
      await tx
        .updateTable('authorization_codes')
        .set({ expires_at: Math.floor(Date.now() / 1000) + 1800 })
        .execute();
    });
    return { client, codes };
  });
}

/** POST /v2/openidc/token with a fresh code per request, in the given body encoding. */
function tokenExchange(
  name: string,
  target: string,
  contentType: string,
  encode: (params: Record<string, string>) => string,
): Scenario {
  return {
    name,
    target,
    async prepare(server) {
      const minted = await mintCodes(server);
      let next = 0;
      return {
        path: '/v2/openidc/token',
        method: 'POST',
        headers: { 'content-type': contentType },
        setupRequest: (request) => {
          request.body = encode(exchangeParams(minted.client, minted.codes[next++ % minted.codes.length]!));
          return request;
        },
      };
    },
  };
}

/** The contract's JSON body. */
export const tokenExchangeJson = tokenExchange(
  'code exchange (JSON body)',
  '≥ 1.5 × oidc-provider (about 4,500/s at 50 connections), p99 < 30 ms (SQLite)',
  'application/json',
  (params) => JSON.stringify(params),
);

/** The RFC 6749 form body that OAuth libraries send. */
export const tokenExchangeForm = tokenExchange(
  'code exchange (form body)',
  'as the JSON body',
  'application/x-www-form-urlencoded',
  (params) => new URLSearchParams(params).toString(),
);

/** GET /v2/openidc/user with one access token (signature, revocation and profile decryption each time). */
export const userinfo: Scenario = {
  name: 'userinfo',
  target: 'reported',
  async prepare(server) {
    const minted = await mintCodes(server);
    const accessToken = await exchangeForAccessToken(server, minted.client, minted.codes[0]!);
    return { path: '/v2/openidc/user', headers: { authorization: `Bearer ${accessToken}` } };
  },
};
