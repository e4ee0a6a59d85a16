import assert from 'node:assert/strict';
import { exportJWK } from 'jose';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createClient, setClientSettings } from '../../src/clients/client-admin.ts';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { checkVerifierMetadata } from '../../src/oid4vp/verifier-registry.ts';
import { logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential, type StockIssuer } from '../credentials/stock-issuer.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  interactionView,
  postInteraction,
  type RelyingParty,
  registerRelyingParty,
  signSiwe,
} from '../oidc/flow-helpers.ts';
import {
  type EncryptionKey,
  LDP_VC_FORMATS,
  type Received,
  startVerifier,
  type Transaction,
  type Verifier,
} from './verifier.ts';

/** A Coffer that trusts its own test verifier's TLS certificate, an issuer and a relying party. */
export interface WalletWorld {
  server: TestServer;
  verifier: Verifier;
  rp: RelyingParty;
  issuer: StockIssuer;
  /** The issuer is a master client; relying parties may be its sub-clients. */
  issuerClientId: number;
  issuerToken: string;
  /** Stops the server and the verifier. */
  close(): Promise<void>;
}

/** Starts a verifier and a Coffer beside it; if Coffer fails to start, the verifier is closed. */
export async function startWalletWorld(
  kind: DatabaseKind,
  extraEnv: Record<string, string> = {},
  /** More TLS certificates the wallet trusts (another server the test runs). */
  extraCa: string[] = [],
): Promise<WalletWorld> {
  const verifier = await startVerifier();
  let server: TestServer | undefined;
  try {
    const outbound = createOutboundClient({
      allowPrivateTargets: true,
      ca: [verifier.tlsCertificatePem, ...extraCa],
    });
    server = await startTestServer(kind, { ALLOW_PRIVATE_TARGETS: 'true', ...extraEnv }, { outbound });
    await registerPersonContext(server);
    const master = await server.createMaster('Issuer');
    const started = server;
    return {
      server,
      verifier,
      rp: await registerRelyingParty(server),
      issuer: await createStockIssuer(),
      issuerClientId: master.clientId,
      issuerToken: master.token,
      close: async () => {
        await started.close();
        await verifier.close();
      },
    };
  } catch (error) {
    await server?.close();
    await verifier.close();
    throw error;
  }
}

/**
 * A verifier registered with `--verifier` whose metadata (as `coffer client set --verifier-metadata`
 * stores it) holds its request-signing key (the verifier's certificate key, kid sig-1) and the
 * response encryption key; its response URI is that of transaction `id`.
 */
export async function registerVerifierWithKeys(
  world: WalletWorld,
  id: string,
  encryptionKey: EncryptionKey,
): Promise<string> {
  const { db } = world.server.database;
  const signing = await exportJWK(world.verifier.identity.leaf.keys.publicKey);
  const registered = await createClient(db, {
    name: 'Keyed Verifier',
    verifier: true,
    redirectUris: [world.verifier.responseUriOf(id)],
  });
  const metadata = {
    jwks: { keys: [{ ...signing, kid: 'sig-1', alg: 'ES256', use: 'sig' }, encryptionKey.publicJwk] },
    encrypted_response_enc_values_supported: ['A256GCM'],
    vp_formats_supported: LDP_VC_FORMATS,
  };
  await setClientSettings(db, createFieldCipher(world.server.masterKey), registered.client_id, {
    verifierMetadata: checkVerifierMetadata(JSON.stringify(metadata)),
  });
  return String(registered.client_id);
}

/** The issuer stores a PersonCredential for the subject DID in Coffer; returns it as issued. */
export async function issueTo(
  world: WalletWorld,
  did: string,
  claims?: Record<string, unknown>,
  extra?: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const vc = await world.issuer.issue(personCredential(world.issuer.did, did, claims, extra));
  const stored = await world.server.request('POST', '/v1/vc/issuer/store', {
    headers: { 'x-api-token': world.issuerToken },
    body: { vc },
  });
  assert.equal(stored.status, 201, stored.text);
  return vc;
}

/** A person who logged in at the relying party with their wallet and holds one PersonCredential. */
export async function personWithCredential(
  world: WalletWorld,
  account: PrivateKeyAccount,
  claims?: Record<string, unknown>,
) {
  const user = await logInUser(world.server, world.rp, account);
  const credential = await issueTo(world, user.did, claims);
  return { ...user, account, credential, credentialId: String(credential['id']) };
}

export interface Authorized {
  status: number;
  location: string | null;
  text: string;
}

/** The browser opens the wallet's authorization endpoint with the verifier's query. */
export async function authorize(
  server: Pick<TestServer, 'url'>,
  query: string,
  cookie?: string,
): Promise<Authorized> {
  const response = await fetch(`${server.url}/v1/oid4vp/authorize?${query}`, {
    redirect: 'manual',
    headers: cookie ? { cookie: cookie.split(';')[0]! } : {},
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

/** Authorizes and expects the consent interaction; returns its path. */
export async function startConsent(server: TestServer, query: string, cookie?: string): Promise<string> {
  const answer = await authorize(server, query, cookie);
  assert.equal(answer.status, 303, answer.text);
  assert.match(answer.location ?? '', /^\/interaction\/[A-Za-z0-9_-]+$/);
  return answer.location!;
}

export async function logInWithSiweInConsent(server: TestServer, path: string, account: PrivateKeyAccount) {
  const view = await interactionView(server, path);
  assert.equal(view.status, 200);
  const login = await postInteraction(server, path, 'login/wallet', await signSiwe(account, view.body.siwe));
  assert.equal(login.status, 200, JSON.stringify(login.body));
  assert.deepEqual(login.body, { next: 'consent' });
  return login;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

export async function consentView(server: TestServer, path: string): Promise<Json> {
  const view = await interactionView(server, path);
  assert.equal(view.status, 200, JSON.stringify(view.body));
  assert.equal(view.body.kind, 'consent');
  return view.body.consent;
}

export const decide = (server: TestServer, path: string, body: Record<string, unknown>) =>
  postInteraction(server, path, 'consent', body);

/** Approves and expects the browser to be sent where the verifier said; returns what it received. */
export async function approve(
  server: TestServer,
  path: string,
  transaction: Transaction,
  selections?: Record<string, string | string[]>,
): Promise<Received> {
  const before = transaction.received.length;
  const answer = await decide(server, path, { decision: 'approve', ...(selections ? { selections } : {}) });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(transaction.received.length, before + 1, 'the verifier received one response');
  const received = transaction.received.at(-1)!;
  assert.equal(received.refusal, null, `the verifier refused the response: ${received.refusal}`);
  assert.equal(
    answer.body.redirect_to,
    received.redirectUri,
    "the browser ends at the verifier's redirect_uri",
  );
  return received;
}

/** The one response an error produced, sent to the verifier rather than shown on a page. */
export function errorAtVerifier(answer: Authorized, transaction: Transaction, code: string): Received {
  assert.equal(answer.status, 303, answer.text);
  assert.equal(transaction.received.length, 1, 'the verifier received exactly one response');
  const [received] = transaction.received;
  assert.equal(received!.refusal, null, `the verifier refused the response: ${received!.refusal}`);
  assert.equal(received!.error, code, JSON.stringify(received!.parameters));
  assert.equal(received!.state, transaction.state);
  assert.equal(received!.vpToken, null);
  assert.equal(answer.location, received!.redirectUri, 'the browser goes where the verifier said');
  return received!;
}

/** An error that must not reach the verifier: a 400 HTML page, nothing sent, no interaction. */
export function errorPage(answer: Authorized, transaction: Transaction, pattern: RegExp): void {
  assert.equal(answer.status, 400, answer.text);
  assert.equal(answer.location, null);
  assert.match(answer.text, /<html/i);
  assert.match(answer.text, pattern);
  assert.equal(transaction.received.length, 0, 'nothing reaches an unauthenticated verifier');
}
