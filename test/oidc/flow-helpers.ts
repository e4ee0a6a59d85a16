import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import * as oidc from 'openid-client';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { type CreateClientInput, createClient } from '../../src/clients/client-admin.ts';
import type { TestServer } from '../helpers/server.ts';

export const REDIRECT_URI = 'https://rp.example/callback';

export interface RelyingParty {
  clientId: number;
  clientSecret: string;
  config: oidc.Configuration;
}

/** A client registered the way the CLI does it, and openid-client configured from discovery only. */
export async function registerRelyingParty(
  server: TestServer,
  parentId?: number,
  registration: Pick<CreateClientInput, 'grantTypes' | 'dpopBound' | 'requirePar' | 'public'> = {},
): Promise<RelyingParty> {
  const created = await createClient(server.database.db, {
    name: 'Relying Party',
    redirectUris: [REDIRECT_URI],
    ...(parentId ? { parentId } : {}),
    ...registration,
  });
  const config = await oidc.discovery(
    new URL(server.url),
    String(created.client_id),
    created.client_secret ?? undefined,
    created.client_secret === null ? oidc.None() : undefined,
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  return { clientId: created.client_id, clientSecret: created.client_secret ?? '', config };
}

export interface StartedLogin {
  interactionPath: string;
  verifier: string;
  nonce: string;
  state: string;
}

/** The relying party's authorization URL (code flow, PKCE, state and nonce), as its app builds it. */
export interface LoginOptions {
  /** Push the request first (RFC 9126), as buildAuthorizationUrlWithPAR does, with this DPoP key if given. */
  par?: boolean;
  dpop?: oidc.DPoPHandle;
}

export async function authorizationRequest(
  rp: RelyingParty,
  extra: Record<string, string> = {},
  options: LoginOptions = {},
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const state = oidc.randomState();
  const build = options.par
    ? (params: Record<string, string>) =>
        oidc.buildAuthorizationUrlWithPAR(rp.config, params, options.dpop ? { DPoP: options.dpop } : {})
    : async (params: Record<string, string>) => oidc.buildAuthorizationUrl(rp.config, params);
  const url = await build({
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return { url: url.href, verifier, nonce, state };
}

/** Sends the "browser" to the authorization endpoint and returns where Coffer sends it. */
export async function startLogin(
  _server: TestServer,
  rp: RelyingParty,
  extra: Record<string, string> = {},
  options: LoginOptions = {},
): Promise<StartedLogin> {
  const { url, verifier, nonce, state } = await authorizationRequest(rp, extra, options);
  const response = await fetch(url, { redirect: 'manual' });
  if (response.status !== 303)
    throw new Error(`authorize answered ${response.status}: ${await response.text()}`);
  const location = response.headers.get('location')!;
  return { interactionPath: location, verifier, nonce, state };
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

export async function interactionView(
  server: TestServer,
  interactionPath: string,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(server.url + interactionPath, { headers: { accept: 'application/json' } });
  return { status: response.status, body: await response.json() };
}

/** What a wallet does: build the EIP-4361 message from the challenge and sign it. */
export async function signSiwe(
  account: PrivateKeyAccount,
  siwe: {
    domain: string;
    uri: string;
    chain_id: number;
    nonce: string;
    issued_at: string;
    expiration_time: string;
    statement: string;
  },
  overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {},
) {
  const message = createSiweMessage({
    address: account.address,
    domain: siwe.domain,
    uri: siwe.uri,
    chainId: siwe.chain_id,
    nonce: siwe.nonce,
    issuedAt: new Date(siwe.issued_at),
    expirationTime: new Date(siwe.expiration_time),
    statement: siwe.statement,
    version: '1',
    ...overrides,
  });
  return { message, signature: await account.signMessage({ message }) };
}

export async function postInteraction(
  server: TestServer,
  interactionPath: string,
  step: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; cookie: string | null; headers: Headers }> {
  const response = await fetch(`${server.url}${interactionPath}/${step}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: await response.json(),
    cookie: response.headers.get('set-cookie'),
    headers: response.headers,
  };
}

/** Wallet log-in from the authorization request to the code at the client's redirect URI. */
export async function logInWithWallet(
  server: TestServer,
  rp: RelyingParty,
  account: PrivateKeyAccount,
  extra: Record<string, string> = {},
  options: LoginOptions = {},
) {
  const started = await startLogin(server, rp, extra, options);
  const view = await interactionView(server, started.interactionPath);
  const signed = await signSiwe(account, view.body.siwe);
  const result = await postInteraction(server, started.interactionPath, 'login/wallet', signed);
  if (result.status !== 200)
    throw new Error(`wallet log-in answered ${result.status}: ${JSON.stringify(result.body)}`);
  return { ...started, redirectTo: new URL(result.body.redirect_to as string), cookie: result.cookie! };
}

/** The one-time code of the newest message in the outbox written to `to`. */
export async function codeFromOutbox(server: TestServer, to: string): Promise<string> {
  const dir = path.join(server.testDatabase.dataDir, 'outbox');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.eml')).sort();
  for (const file of files.reverse()) {
    const text = await readFile(path.join(dir, file), 'utf8');
    if (text.includes(to)) {
      const match = text.match(/\b(\d{6})\b/);
      if (match) return match[1]!;
    }
  }
  throw new Error(`no code for ${to} in the outbox`);
}

/** An e-mail log-in at the relying party (over HTTP), which signs the person up; returns their DID. */
export async function signUpByEmail(server: TestServer, rp: RelyingParty, email: string): Promise<string> {
  const started = await startLogin(server, rp);
  const sent = await postInteraction(server, started.interactionPath, 'login/email', { email });
  if (sent.status !== 202) throw new Error(`sending the code answered ${sent.status}`);
  const code = await codeFromOutbox(server, email);
  const verified = await postInteraction(server, started.interactionPath, 'login/email/verify', { code });
  if (verified.status !== 200)
    throw new Error(`the code answered ${verified.status}: ${JSON.stringify(verified.body)}`);
  const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(verified.body.redirect_to), {
    pkceCodeVerifier: started.verifier,
    expectedNonce: started.nonce,
    expectedState: started.state,
  });
  return String(tokens.claims()!['did_wallet_address']);
}
