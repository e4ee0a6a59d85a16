import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createClient } from '../../src/clients/client-admin.ts';
import { createOutboundClient } from '../../src/http/outbound.ts';
import type { LoggedInUser } from '../credentials/helpers.ts';
import { coffer } from '../helpers/cli.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { HostedWallet } from '../oid4vci/issuance-helpers.ts';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';
import { interactionView, postInteraction, REDIRECT_URI, signSiwe } from '../oidc/flow-helpers.ts';
import { startTlsFront, type TlsFront } from '../verifier/tls-front.ts';

/**
 * One Coffer that is both sides of OpenID4VCI: its tenant "University" is an issuer (enabled with
 * `coffer issuer enable --key --chain`, a certificate from a CA made here that ISSUER_TRUST_ANCHORS
 * holds), and its hosted wallet receives for a person who logged in at another tenant. The
 * server sits behind a TLS front (wallets take only https:// issuers); its outbound client trusts
 * the front's CA, so the wallet reaches the issuer as it would reach another deployment.
 */
export interface IssuerAndWallet extends HostedWallet {
  server: TestServer;
  front: TlsFront;
  clientId: number;
  token: string;
  issuerId: string;
  issuerCa: Certified;
  /** The issuer's signing certificate (ES256). */
  issuerLeaf: Certified;
  /** The tenant API of the issuer (x-api-token). */
  api(method: string, p: string, body?: unknown): ReturnType<TestServer['request']>;
  close(): Promise<void>;
}

export interface IssuerAndWalletOptions {
  env?: Record<string, string>;
  /** `coffer issuer enable --haip`. */
  haip?: boolean;
  /** More CAs (PEM) the server's outbound requests trust, e.g. a trusted-list server's. */
  trust?: string[];
}

export async function startIssuerAndWallet(
  kind: DatabaseKind,
  options: IssuerAndWalletOptions = {},
): Promise<IssuerAndWallet> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-issuer-wallet-'));
  const front = await startTlsFront();
  const issuerCa = await makeCertificate({ subject: 'CN=Test University CA, O=Test', ca: true });
  const leaf = await makeCertificate({
    subject: 'CN=University Issuer, O=Test',
    issuer: issuerCa,
    keyIdentifiers: true,
    // PUBLIC_URL's host, which the SD-JWT VCs' iss names: the wallet ties the two.
    ipAddresses: ['127.0.0.1'],
  });
  const keyFile = path.join(dir, 'issuer-key.pem');
  const chainFile = path.join(dir, 'issuer-chain.pem');
  const anchors = path.join(dir, 'issuer-anchors.pem');
  await writeFile(keyFile, await privateKeyPem(leaf.keys.privateKey));
  await writeFile(chainFile, `${leaf.pem}\n${issuerCa.pem}\n`);
  await writeFile(anchors, issuerCa.pem);
  let server: TestServer | undefined;
  try {
    server = await startTestServer(
      kind,
      {
        ALLOW_PRIVATE_TARGETS: 'true',
        PUBLIC_URL: front.url,
        ISSUER_TRUST_ANCHORS: anchors,
        ...options.env,
      },
      {
        outbound: createOutboundClient({
          allowPrivateTargets: true,
          ca: [front.ca.pem, ...(options.trust ?? [])],
        }),
      },
    );
    front.target = server.url;
    const { clientId, token } = await server.createMaster('University');
    const enabled = await coffer(
      server,
      'issuer',
      'enable',
      '--client',
      String(clientId),
      '--key',
      keyFile,
      '--chain',
      chainFile,
      ...(options.haip ? ['--haip'] : []),
      '--json',
    );
    if (enabled.code !== 0) throw new Error(`issuer enable failed: ${enabled.stderr}`);
    const { credential_issuer: issuerId } = JSON.parse(enabled.stdout) as { credential_issuer: string };
    const account = privateKeyToAccount(generatePrivateKey());
    const user = await logInThroughFront(server, front, account);
    const started = server;
    return {
      server,
      front,
      clientId,
      token,
      issuerId,
      issuerCa,
      issuerLeaf: leaf,
      account,
      user,
      cookie: undefined,
      api: (method, p, body) =>
        started.request(method, p, {
          headers: { 'x-api-token': token },
          ...(body === undefined ? {} : { body }),
        }),
      async close() {
        await started.close();
        await front.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await server?.close();
    await front.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The wallet's Credential Offer Endpoint query for an offer the tenant made. */
export const offerQuery = (created: { credential_offer_uri: string }) =>
  `credential_offer_uri=${encodeURIComponent(created.credential_offer_uri)}`;

/**
 * A person logs in with their wallet at a relying party of the server (another tenant than the
 * issuer); the app, which reaches the server through the TLS front as its PUBLIC_URL says, gets
 * their tokens. The browser's steps go to the server directly.
 */
async function logInThroughFront(
  server: TestServer,
  front: TlsFront,
  account: PrivateKeyAccount,
): Promise<LoggedInUser> {
  const { clientId: parentId } = await server.createMaster('Shop');
  const created = await createClient(server.database.db, {
    name: 'Relying Party',
    redirectUris: [REDIRECT_URI],
    parentId,
  });
  const config = await oidc.discovery(
    new URL(front.url),
    String(created.client_id),
    created.client_secret ?? undefined,
    undefined,
    { [oidc.customFetch]: front.fetch as never },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const state = oidc.randomState();
  const authorization = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const started = await fetch(`${server.url}${authorization.pathname}${authorization.search}`, {
    redirect: 'manual',
  });
  if (started.status !== 303)
    throw new Error(`authorize answered ${started.status}: ${await started.text()}`);
  const interactionPath = started.headers.get('location')!;
  const view = await interactionView(server, interactionPath);
  const login = await postInteraction(
    server,
    interactionPath,
    'login/wallet',
    await signSiwe(account, view.body.siwe),
  );
  if (login.status !== 200) throw new Error(`log-in answered ${login.status}: ${JSON.stringify(login.body)}`);
  const tokens = await oidc.authorizationCodeGrant(config, new URL(login.body.redirect_to as string), {
    pkceCodeVerifier: verifier,
    expectedNonce: nonce,
    expectedState: state,
  });
  const claims = tokens.claims()!;
  return {
    accessToken: tokens.access_token,
    did: String(claims['did_wallet_address']),
    userId: Number(claims.sub),
    bearer: { authorization: `Bearer ${tokens.access_token}` },
  };
}
