import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { type LoggedInUser, logInUser } from '../credentials/helpers.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import {
  startTestIssuer,
  type TestIssuer,
  type TestIssuerOptions,
} from '../helpers/issuers/openid4vci-issuer.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startVerifier, type Transaction, type Verifier } from '../oid4vp/verifier.ts';
import { approve, logInWithSiweInConsent, startConsent } from '../oid4vp/wallet-helpers.ts';
import {
  interactionView,
  postInteraction,
  type RelyingParty,
  registerRelyingParty,
} from '../oidc/flow-helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

/**
 * A Coffer beside an OpenID4VCI issuer built on the issuer side of @openid4vc/openid4vci (its
 * own HTTPS server and test CA) and an OpenID4VP verifier; a person with an account who holds
 * no credential yet.
 */
export interface IssuanceWorld {
  server: TestServer;
  issuer: TestIssuer;
  verifier: Verifier;
  rp: RelyingParty;
  account: PrivateKeyAccount;
  user: LoggedInUser;
  /** The wallet session cookie, once the person logged in inside an interaction. */
  cookie: string | undefined;
  close(): Promise<void>;
}

/**
 * Starts the world. Given an issuer already running (another wallet beside the first one), it
 * uses that issuer and leaves it running at close.
 */
export async function startIssuanceWorld(
  kind: DatabaseKind,
  issuerOptions: TestIssuerOptions | { shared: TestIssuer } = {},
  extraEnv: Record<string, string> = {},
): Promise<IssuanceWorld> {
  const shared = 'shared' in issuerOptions ? issuerOptions.shared : undefined;
  const issuer = shared ?? (await startTestIssuer(issuerOptions as TestIssuerOptions));
  const closeIssuer = () => (shared ? Promise.resolve() : issuer.close());
  const verifier = await startVerifier();
  const anchorFile = path.join(tmpdir(), `coffer-issuers-${randomBytes(6).toString('hex')}.pem`);
  await writeFile(anchorFile, issuer.identity.ca.pem);
  let server: TestServer | undefined;
  try {
    const outbound = createOutboundClient({
      allowPrivateTargets: true,
      ca: [issuer.tlsCaPem, verifier.tlsCertificatePem],
    });
    server = await startTestServer(
      kind,
      { ALLOW_PRIVATE_TARGETS: 'true', ISSUER_TRUST_ANCHORS: anchorFile, ...extraEnv },
      { outbound },
    );
    const rp = await registerRelyingParty(server);
    const account = privateKeyToAccount(generatePrivateKey());
    const user = await logInUser(server, rp, account);
    const started = server;
    return {
      server,
      issuer,
      verifier,
      rp,
      account,
      user,
      cookie: undefined,
      close: async () => {
        await started.close();
        await closeIssuer();
        await verifier.close();
        await rm(anchorFile, { force: true });
      },
    };
  } catch (error) {
    await server?.close();
    await closeIssuer();
    await verifier.close();
    await rm(anchorFile, { force: true });
    throw error;
  }
}

/** What driving the hosted wallet needs: the server, the person and their wallet session. */
export type HostedWallet = Pick<IssuanceWorld, 'server' | 'account' | 'user' | 'cookie'>;

export interface Opened {
  status: number;
  location: string | null;
  text: string;
}

/** The person's browser opens the wallet's Credential Offer Endpoint with the issuer's query. */
export async function openOffer(world: HostedWallet, query: string, accept?: string): Promise<Opened> {
  const response = await fetch(`${world.server.url}/v1/oid4vci/offer?${query}`, {
    redirect: 'manual',
    headers: {
      ...(world.cookie ? { cookie: world.cookie } : {}),
      ...(accept ? { accept } : {}),
    },
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

/** Opens an offer and, the first time, logs in inside the interaction; returns its path. */
export async function startIssuance(world: HostedWallet, query: string): Promise<string> {
  const opened = await openOffer(world, query);
  assert.equal(opened.status, 303, opened.text);
  const interactionPath = opened.location!;
  assert.match(interactionPath, /^\/interaction\/[A-Za-z0-9_-]+$/);
  if (!world.cookie) {
    const login = await logInWithSiweInConsent(world.server, interactionPath, world.account);
    world.cookie = login.cookie?.split(';')[0];
  }
  return interactionPath;
}

export async function issuanceView(world: HostedWallet, interactionPath: string): Promise<Json> {
  const view = await interactionView(world.server, interactionPath);
  assert.equal(view.status, 200, JSON.stringify(view.body));
  assert.equal(view.body.kind, 'issuance');
  return view.body.issuance;
}

export const decideIssuance = (world: HostedWallet, interactionPath: string, body: Record<string, unknown>) =>
  postInteraction(world.server, interactionPath, 'consent', body);

/** Every credential of the person, as the list endpoint shows them. */
export async function listed(world: HostedWallet): Promise<Json[]> {
  const list = await world.server.request('GET', '/v1/openidc/credentials', { headers: world.user.bearer });
  assert.equal(list.status, 200, list.text);
  return (list.body as Json).data;
}

/** The browser follows the issuer's authorization page back to the wallet's callback. */
export async function followAuthorization(world: IssuanceWorld, authorizationUrl: string) {
  const atIssuer = await fetchWithCa(world.issuer.tlsCaPem, authorizationUrl);
  assert.equal(atIssuer.status, 302, atIssuer.body);
  const callback = atIssuer.location!;
  assert.ok(callback.startsWith(`${world.server.url}/v1/oid4vci/callback?`), callback);
  return callback;
}

/** A GET to the test issuer over its own TLS CA, redirects not followed. */
export async function fetchWithCa(
  ca: string,
  url: string,
): Promise<{ status: number; location: string | null; body: string }> {
  const https = await import('node:https');
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            location: (res.headers.location as string | undefined) ?? null,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      })
      .on('error', reject);
  });
}

/** Polls `check` until it returns something, at most `ms` milliseconds. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const FORMATS = {
  'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256', 'EdDSA'] },
  mso_mdoc: { issuerauth_alg_values: [-7, -9], deviceauth_alg_values: [-7, -9, -8] },
};
const audienceOf = (transaction: Transaction) => ({
  clientId: transaction.clientId,
  nonce: transaction.nonce,
  responseUri: transaction.responseUri,
  encryptionJwk: transaction.encryptionKey?.publicJwk ?? null,
});

/** Presents over OpenID4VP 1.0 to the independent verifier (logging in there the first time). */
export async function presentToVerifier(world: IssuanceWorld, dcql: object) {
  const transaction = await world.verifier.createRequest({
    by: 'reference',
    responseMode: 'direct_post.jwt',
    dcql,
    formats: FORMATS,
  });
  const consentPath = await startConsent(world.server, transaction.query, world.cookie);
  if (!world.cookie) await logInWithSiweInConsent(world.server, consentPath, world.account);
  const received = await approve(world.server, consentPath, transaction);
  return { received, audience: audienceOf(transaction) };
}
