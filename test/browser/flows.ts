import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createClient } from '../../src/clients/client-admin.ts';
import { logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential, type StockIssuer } from '../credentials/stock-issuer.ts';
import type { TestServer } from '../helpers/server.ts';
import { authorizationRequest, REDIRECT_URI, type RelyingParty } from '../oidc/flow-helpers.ts';

/** Where the relying party of flow-helpers.ts is; the browser never reaches it (page.route). */
export const RP_ORIGIN = new URL(REDIRECT_URI).origin;

export const VERIFIER_ORIGIN = 'https://verifier.example';
export const VERIFIER_REDIRECT_URI = `${VERIFIER_ORIGIN}/callback`;

export interface AuthorizationStart {
  url: string;
  verifier: string;
  nonce: string;
  state: string;
}

/** The relying party's authorization URL (code flow, PKCE, state and nonce), as its app builds it. */
export const authorizationUrl = (rp: RelyingParty): Promise<AuthorizationStart> => authorizationRequest(rp);

/** The relying party redeems the code the browser brought back (openid-client checks the ID token). */
export async function redeem(rp: RelyingParty, start: AuthorizationStart, callbackUrl: string) {
  const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(callbackUrl), {
    pkceCodeVerifier: start.verifier,
    expectedNonce: start.nonce,
    expectedState: start.state,
  });
  return { tokens, claims: tokens.claims()! };
}

export { signUpByEmail } from '../oidc/flow-helpers.ts';

export interface CredentialShop {
  issuer: StockIssuer;
  /** Stores a person credential with these claims for the subject DID; returns its id. */
  store(subjectDid: string, claims: Record<string, string>): Promise<string>;
}

/** An issuer (a master client with an API token and the stock bbs-2023 stack) that stores credentials. */
export async function credentialShop(server: TestServer): Promise<CredentialShop> {
  await registerPersonContext(server);
  const { token } = await server.createMaster('Issuer');
  const issuer = await createStockIssuer();
  return {
    issuer,
    async store(subjectDid, claims) {
      const vc = await issuer.issue(personCredential(issuer.did, subjectDid, claims));
      const stored = await server.request('POST', '/v1/vc/issuer/store', {
        headers: { 'x-api-token': token },
        body: { vc },
      });
      assert.equal(stored.status, 201, stored.text);
      return String(vc['id']);
    },
  };
}

/**
 * Someone who signed up at the relying party with a new wallet (over HTTP, not in the browser)
 * and holds person credentials with these first names: their wallet account.
 */
export async function walletHolder(
  server: TestServer,
  rp: RelyingParty,
  shop: CredentialShop,
  firstNames: string[],
): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  const user = await logInUser(server, rp, account);
  for (const firstName of firstNames)
    await shop.store(user.did, { first_name: firstName, last_name: 'Lovelace' });
  return account;
}

/** A verifier registered with the wallet (`coffer client create --verifier`), answered by fragment. */
export async function registerVerifier(server: TestServer, name = 'Bar & Grill Age Check') {
  const created = await createClient(server.database.db, {
    name,
    verifier: true,
    redirectUris: [VERIFIER_REDIRECT_URI],
  });
  return String(created.client_id);
}

export interface PresentationRequest {
  url: string;
  nonce: string;
  state: string;
}

/** A person credential's first name: what the verifier asks for unless told otherwise. */
const FIRST_NAME_QUERY = {
  credentials: [
    {
      id: 'person',
      format: 'ldp_vc',
      meta: { type_values: [['https://issuer.example/vocab#PersonCredential']] },
      claims: [{ path: ['credentialSubject', 'first_name'] }],
    },
  ],
};

/** The verifier's OpenID4VP request (by value, fragment response) for this DCQL query, with any extra parameters. */
export function presentationRequest(
  server: TestServer,
  clientId: string,
  dcql: object = FIRST_NAME_QUERY,
  extra: Record<string, string> = {},
): PresentationRequest {
  const nonce = randomBytes(16).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'vp_token',
    response_mode: 'fragment',
    client_id: clientId,
    redirect_uri: VERIFIER_REDIRECT_URI,
    nonce,
    state,
    dcql_query: JSON.stringify(dcql),
    ...extra,
  });
  return { url: `${server.url}/v1/oid4vp/authorize?${query}`, nonce, state };
}

/** The parameters in the fragment of the URL where the browser landed at the verifier. */
export function fragmentOf(url: string): URLSearchParams {
  return new URLSearchParams(new URL(url).hash.slice(1));
}
