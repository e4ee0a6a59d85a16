import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createOutboundClient } from '../../../src/http/outbound.ts';
import { type LoggedInUser, logInUser } from '../../credentials/helpers.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createWalletProvider, type WalletProviderFiles } from '../../oid4vci/haip-helpers.ts';
import {
  decideIssuance,
  fetchWithCa,
  type HostedWallet,
  listed,
  startIssuance,
} from '../../oid4vci/issuance-helpers.ts';
import { registerRelyingParty } from '../../oidc/flow-helpers.ts';
import { type SuiteBehaviour, type SuiteIssuer, startSuiteIssuer, TX_CODE } from './issuer.ts';

// biome-ignore lint/suspicious/noExplicitAny: the wallet's answers are arbitrary JSON
type Json = any;

/**
 * The vci10wallet plans' world: Coffer (SQLite) as the subject, its hosted wallet for one person,
 * Coffer its own wallet provider (WALLET_PROVIDER_KEY, made with the CLI) so that it can meet a
 * HAIP issuer, and the suite's emulated issuer (issuer.ts), whose TLS CA Coffer's outbound client
 * trusts and whose document-signer CA is in ISSUER_TRUST_ANCHORS.
 */
export interface WalletWorld {
  server: TestServer;
  suite: SuiteIssuer;
  provider: WalletProviderFiles;
  account: PrivateKeyAccount;
  user: LoggedInUser;
  wallet: HostedWallet;
  /** Coffer's OID4VCI client id and wallet provider id (PUBLIC_URL). */
  clientId: string;
  close(): Promise<void>;
}

export async function startWalletWorld(): Promise<WalletWorld> {
  const suite = await startSuiteIssuer();
  const provider = await createWalletProvider();
  const anchorFile = path.join(tmpdir(), `coffer-suite-issuers-${randomBytes(6).toString('hex')}.pem`);
  await writeFile(anchorFile, suite.identity.ca.pem);
  const outbound = createOutboundClient({ allowPrivateTargets: true, ca: [suite.tlsCaPem] });
  const server = await startTestServer(
    'sqlite',
    { ALLOW_PRIVATE_TARGETS: 'true', ISSUER_TRUST_ANCHORS: anchorFile, ...provider.env },
    { outbound },
  );
  const rp = await registerRelyingParty(server);
  const account = privateKeyToAccount(generatePrivateKey());
  const user = await logInUser(server, rp, account);
  const wallet: HostedWallet = { server, account, user, cookie: undefined };
  return {
    server,
    suite,
    provider,
    account,
    user,
    wallet,
    clientId: server.env['OID4VCI_CLIENT_ID'] || server.env['PUBLIC_URL'] || server.url,
    close: async () => {
      await server.close();
      await suite.close();
      await rm(anchorFile, { force: true });
      await rm(provider.dir, { recursive: true, force: true });
    },
  };
}

/** What the person saw at the end of the flow, and what the wallet holds afterwards. */
export interface Outcome {
  /** The wallet's final answer: the consent's (pre-authorized) or the callback's (authorization code). */
  status: number;
  body: Json;
  /** The credentials the person holds before and after. */
  before: number;
  after: number;
  /** The callback the AS redirected the browser to (authorization code). */
  callback: string | undefined;
}

/**
 * Runs one module against Coffer's wallet: the suite's issuer is reset to the module's
 * behaviour, makes an offer (by value or by reference), and the person opens it in the hosted
 * wallet, approves, and (authorization code) goes through the issuer's authorization endpoint
 * and back to the wallet's callback.
 */
export async function receiveOffer(
  world: WalletWorld,
  behaviour: Partial<SuiteBehaviour>,
  offer: { grant: 'pre-authorized' | 'authorization_code'; byReference: boolean },
): Promise<Outcome> {
  world.suite.reset(behaviour);
  const before = (await listed(world.wallet)).length;
  const query = world.suite.createOffer(offer);
  const interactionPath = await startIssuance(world.wallet, query);
  if (offer.grant === 'pre-authorized') {
    const answer = await decideIssuance(world.wallet, interactionPath, {
      decision: 'approve',
      tx_code: TX_CODE,
    });
    const after = (await listed(world.wallet)).length;
    return { status: answer.status, body: answer.body, before, after, callback: undefined };
  }
  const answer = await decideIssuance(world.wallet, interactionPath, { decision: 'approve' });
  if (answer.status !== 200 || !answer.body.redirect_to) {
    const after = (await listed(world.wallet)).length;
    return { status: answer.status, body: answer.body, before, after, callback: undefined };
  }
  const atIssuer = await fetchWithCa(world.suite.tlsCaPem, answer.body.redirect_to);
  assert.equal(atIssuer.status, 302, atIssuer.body);
  const callback = atIssuer.location!;
  const done = await fetch(callback, {
    headers: { cookie: world.wallet.cookie!, accept: 'application/json' },
  });
  const body = (await done.json()) as Json;
  const after = (await listed(world.wallet)).length;
  return { status: done.status, body, before, after, callback };
}

/** The same callback seen by the person's browser as a page (the error the person reads). */
export async function callbackPage(
  world: WalletWorld,
  callback: string,
): Promise<{ status: number; text: string }> {
  const page = await fetch(callback, { headers: { cookie: world.wallet.cookie!, accept: 'text/html' } });
  return { status: page.status, text: await page.text() };
}
