import * as oidc from 'openid-client';
import type { PrivateKeyAccount } from 'viem/accounts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import type { TestServer } from '../helpers/server.ts';
import { logInWithWallet, type RelyingParty } from '../oidc/flow-helpers.ts';
import { PERSON_CONTEXT, PERSON_CONTEXT_URL } from './stock-issuer.ts';

export async function registerPersonContext(server: TestServer): Promise<void> {
  await registerContext(server.database.db, PERSON_CONTEXT_URL, JSON.stringify(PERSON_CONTEXT));
}

export interface LoggedInUser {
  accessToken: string;
  did: string;
  userId: number;
  bearer: { authorization: string };
}

/** A person logs in with their wallet at the relying party; the app gets their tokens. */
export async function logInUser(
  server: TestServer,
  rp: RelyingParty,
  account: PrivateKeyAccount,
): Promise<LoggedInUser> {
  const login = await logInWithWallet(server, rp, account);
  const tokens = await oidc.authorizationCodeGrant(rp.config, login.redirectTo, {
    pkceCodeVerifier: login.verifier,
    expectedNonce: login.nonce,
    expectedState: login.state,
  });
  const claims = tokens.claims()!;
  return {
    accessToken: tokens.access_token,
    did: String(claims['did_wallet_address']),
    userId: Number(claims.sub),
    bearer: { authorization: `Bearer ${tokens.access_token}` },
  };
}
