import type { JsonWebKey } from 'node:crypto';
import type { Request } from 'autocannon';
import { fastBbs } from '../../src/bbs/index.ts';
import { createCredentialInserter } from '../../src/credentials/credential-repository.ts';
import type { StoreCredentialBody } from '../../src/credentials/credential-schemas.ts';
import { storeCredential } from '../../src/credentials/credential-service.ts';
import { inProcessOperations } from '../../src/formats/ldp-vc/bbs-2023/operations.ts';
import type { SecuredDocument } from '../../src/formats/ldp-vc/bbs-2023/shared.ts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import { createFormatRegistry } from '../../src/formats/registry.ts';
import { deriveKey } from '../../src/keys/derive-key.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { logInWithWallet } from '../../src/users/user-login.ts';
import type { UserIdentity } from '../../src/users/user-repository.ts';
import { recordHistory } from '../../src/wallet/wallet-history.ts';
import {
  BENCH_CONTEXT,
  BENCH_CONTEXT_URL,
  benchJsonLd,
  createBenchIssuer,
} from '../../test/helpers/credential-factory.ts';
import { holderJwkOf } from '../../test/helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../../test/helpers/issuers/issuer-ca.ts';
import { issueMdoc } from '../../test/helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc } from '../../test/helpers/issuers/sd-jwt-issuer.ts';
import type { Scenario } from '../scenario.ts';
import { createRelyingParty, exchangeForAccessToken, mintCode, withServerState } from '../seed.ts';
import type { BenchServer } from '../server.ts';

/** The BBS implementation that signs the benchmark's credentials (not what is measured). */
const issuingBbs = fastBbs;

export interface Holder {
  did: string;
  user: UserIdentity;
  accessToken: string;
  /** An API token of a client that may store credentials. */
  apiToken: string;
  /** Stores credentials for the holder in-process, through the service's own store function. */
  seed(credentials: Array<SecuredDocument | string>): Promise<void>;
}

/** A user of a fresh relying party, logged in (access token), and the claims context registered. */
/**
 * A holder account at a fresh relying party. Holders share one wallet address unless given their
 * own, so they are one person, whose wallet page shows every holder's credentials.
 */
export async function prepareHolder(
  server: BenchServer,
  walletAddress = '0x00000000000000000000000000000000000000c1',
): Promise<Holder> {
  const seeded = await withServerState(server, async (state) => {
    const client = await createRelyingParty(state);
    const user = await logInWithWallet(state.users, client.client_id, walletAddress, 1);
    await registerContext(state.database.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));
    return { client, user, code: await mintCode(state.database.db, client.client_id, user) };
  });
  return {
    did: seeded.user.did,
    user: seeded.user,
    accessToken: await exchangeForAccessToken(server, seeded.client, seeded.code),
    apiToken: seeded.client.api_token,
    seed: (credentials) =>
      withServerState(server, async (state) => {
        const masterKey = Buffer.from(server.env['MASTER_KEY']!, 'base64');
        const operations = inProcessOperations({ bbs: issuingBbs, jsonLd: benchJsonLd });
        const deps = {
          db: state.database.db,
          store: state.store,
          contentKey: deriveKey(masterKey, 'credential-content/v1'),
          operations,
          insertCredential: createCredentialInserter(
            state.database.db,
            state.database.dialect,
            (db, entries) => recordHistory({ db, cipher: createFieldCipher(masterKey) }, entries),
          ),
          formats: createFormatRegistry({ operations, jsonLd: benchJsonLd }),
          issuerTrustAnchors: [],
        };
        const caller = { clientId: seeded.client.client_id, isMaster: false, parentId: null };
        for (const vc of credentials) {
          await storeCredential(deps, caller, { vc: vc as unknown as StoreCredentialBody['vc'] });
        }
      }),
  };
}

async function issueMany(issue: () => Promise<SecuredDocument>, count: number): Promise<SecuredDocument[]> {
  const issued: SecuredDocument[] = [];
  for (let i = 0; i < count; i++) issued.push(await issue());
  return issued;
}

const STORE_CREDENTIALS = Number(process.env['BENCH_CREDENTIALS'] ?? '2000');

/** POST /v1/vc/issuer/store with a new 10-claim credential each time (base proof verified). */
/** Store requests that send each prepared body once, in turn. */
function storeRequests(apiToken: string, bodies: string[]) {
  let next = 0;
  return {
    path: '/v1/vc/issuer/store',
    method: 'POST' as const,
    headers: { 'x-api-token': apiToken, 'content-type': 'application/json' },
    setupRequest: (request: Request) => {
      request.body = bodies[next++ % bodies.length]!;
      return request;
    },
    // A re-sent credential takes the idempotent path (same CID, no proof check), so rows
    // measured after the pool ran out are flagged rather than mixed in silently.
    repeats: () => Math.max(0, next - bodies.length),
  };
}

export const credentialStore: Scenario = {
  name: 'credential store (10 claims)',
  target: '≥ 150/s, p99 < 100 ms (SQLite)',
  async prepare(server) {
    const holder = await prepareHolder(server);
    const issuer = await createBenchIssuer(issuingBbs);
    const bodies = (await issueMany(() => issuer.issue(holder.did, 10), STORE_CREDENTIALS)).map((vc) =>
      JSON.stringify({ vc }),
    );
    return storeRequests(holder.apiToken, bodies);
  },
};

/** Ten selectively disclosable claims, as the issue's figure asks for. */
const TEN_CLAIMS = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`claim_${i}`, `value ${i}`]));

/** POST /v1/vc/issuer/store with a new compact credential each time (every signature and digest checked). */
function compactStore(
  name: string,
  issue: (identity: IssuerIdentity, holderJwk: JsonWebKey) => Promise<string>,
): Scenario {
  return {
    name,
    target: '≥ 1,000/s at 10 connections (SQLite)',
    async prepare(server) {
      const holder = await prepareHolder(server);
      const identity = await makeIssuerIdentity('Bench Issuer');
      const holderJwk = holderJwkOf(holder.did);
      const bodies: string[] = [];
      for (let i = 0; i < STORE_CREDENTIALS; i++)
        bodies.push(JSON.stringify({ vc: await issue(identity, holderJwk) }));
      return storeRequests(holder.apiToken, bodies);
    },
  };
}

export const sdJwtStore = compactStore('credential store dc+sd-jwt (10 claims)', (identity, holderJwk) =>
  issueSdJwtVc(identity, {
    holderJwk,
    claims: TEN_CLAIMS,
    disclosureFrame: { _sd: Object.keys(TEN_CLAIMS) },
  }),
);

export const mdocStore = compactStore('credential store mso_mdoc (6 elements)', (identity, deviceJwk) =>
  issueMdoc(identity, { deviceJwk }),
);

/** GET /v1/openidc/credentials for a user with 1,000 credentials (1,000 blocks read and decrypted). */
export const credentialList: Scenario = {
  name: 'credential list (1,000 stored)',
  target: 'reported',
  async prepare(server) {
    const holder = await prepareHolder(server);
    const issuer = await createBenchIssuer(issuingBbs);
    await holder.seed(await issueMany(() => issuer.issue(holder.did, 10), 1000));
    return { path: '/v1/openidc/credentials', headers: { authorization: `Bearer ${holder.accessToken}` } };
  },
};

/** The request body of a proof disclosing claims 0 and 1 of one stored credential. */
const proofBody = (vc: SecuredDocument) =>
  JSON.stringify({
    vcIdFields: { [vc['id'] as string]: ['/credentialSubject/claim_0', '/credentialSubject/claim_1'] },
    options: { presentationHeader: 'bench-verifier-nonce' },
  });

/**
 * One holder with `count` stored credentials of `claims` claims each, and a proof request body
 * (2 claims disclosed) per credential. Seeded in this process, so the server has read none of
 * their blocks: each body's first request is a credential presented for the first time.
 */
export async function prepareProofRequests(
  server: BenchServer,
  claims: number,
  count: number,
): Promise<{ path: string; headers: Record<string, string>; bodies: string[] }> {
  const holder = await prepareHolder(server);
  const issuer = await createBenchIssuer(issuingBbs);
  const credentials = await issueMany(() => issuer.issue(holder.did, claims), count);
  await holder.seed(credentials);
  return {
    path: '/v1/openidc/credentials/proof',
    headers: { authorization: `Bearer ${holder.accessToken}`, 'content-type': 'application/json' },
    bodies: credentials.map(proofBody),
  };
}

/** POST /v1/openidc/credentials/proof disclosing 2 of `claims` claims (a bbs-2023 derivation). */
function credentialProof(claims: number): Scenario {
  return {
    name: `credential proof (${claims} claims, 2 disclosed)`,
    target: claims === 10 ? '≥ 150/s, p99 < 100 ms (SQLite)' : 'reported',
    async prepare(server) {
      const { path, headers, bodies } = await prepareProofRequests(server, claims, 1);
      return { path, method: 'POST', headers, body: bodies[0]! };
    },
  };
}

export const credentialProof10 = credentialProof(10);
export const credentialProof50 = credentialProof(50);
