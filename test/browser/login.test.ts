import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage, parseSiweMessage } from 'viem/siwe';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  codeFromOutbox,
  REDIRECT_URI,
  type RelyingParty,
  registerRelyingParty,
} from '../oidc/flow-helpers.ts';
import { chromiumMissing, injectWallet, launchChromium, openPage, serveStandIn } from './browser.ts';
import { authorizationUrl, RP_ORIGIN, redeem } from './flows.ts';

describe('OIDC log-in in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let server: TestServer;
  let rp: RelyingParty;

  before(async () => {
    [browser, server] = await Promise.all([launchChromium(), startTestServer('sqlite')]);
    rp = await registerRelyingParty(server);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('by e-mail code: authorize → log-in page → code from the outbox → a code the RP redeems', async () => {
    const t = await openPage(browser);
    await serveStandIn(t.context, RP_ORIGIN, 'Relying Party');
    const { page } = t;
    const start = await authorizationUrl(rp);
    await page.goto(start.url);
    assert.match(
      new URL(page.url()).pathname,
      /^\/interaction\/[^/]+$/,
      'Coffer sent the browser to its log-in page',
    );
    assert.equal(await page.title(), 'Log in – Relying Party');
    await page.getByRole('heading', { level: 1, name: 'Log in to Relying Party' }).waitFor();
    await t.screenshot('login-page');

    const email = 'ada.browser@example.com';
    await page.getByLabel('E-mail address', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Send me a code' }).click();
    const codeInput = page.getByLabel('Code from the e-mail');
    await codeInput.waitFor();
    assert.equal(await page.getByRole('status').textContent(), `We sent a code to ${email}. Enter it below.`);
    await t.screenshot('login-code-sent');

    await codeInput.fill(await codeFromOutbox(server, email));
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${REDIRECT_URI}?**`);
    const callback = new URL(page.url());
    assert.ok(callback.searchParams.get('code'), 'a code');
    assert.equal(callback.searchParams.get('state'), start.state);
    await t.screenshot('login-email-back-at-rp');

    const { tokens, claims } = await redeem(rp, start, page.url());
    assert.ok(tokens.access_token);
    assert.equal(claims['login_type'], 'email');
    assert.equal(claims['eth_address'], null);
    assert.match(String(claims['did_wallet_address']), /^did:key:z6Mk/);
    await t.close();
  });

  test('with a wallet: the page builds the SIWE message, the wallet signs it, the ID token names the address', async () => {
    const t = await openPage(browser);
    await serveStandIn(t.context, RP_ORIGIN, 'Relying Party');
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = await injectWallet(t.context, account);
    const { page } = t;
    const start = await authorizationUrl(rp);
    await page.goto(start.url);
    await page.getByRole('button', { name: 'Connect wallet' }).click();
    await page.waitForURL(`${REDIRECT_URI}?**`);
    assert.equal(new URL(page.url()).searchParams.get('state'), start.state);
    await t.screenshot('login-wallet-back-at-rp');

    // The one message signed is a well-formed EIP-4361 message for this service and account.
    assert.equal(wallet.signed.length, 1);
    const [message] = wallet.signed as [string];
    const fields = parseSiweMessage(message);
    assert.equal(fields.address, account.address, 'the EIP-55 checksummed address');
    assert.equal(fields.domain, new URL(server.url).host);
    assert.equal(fields.uri, server.url);
    assert.equal(fields.chainId, 1);
    assert.equal(createSiweMessage(fields as Parameters<typeof createSiweMessage>[0]), message);

    const { claims } = await redeem(rp, start, page.url());
    assert.equal(claims['eth_address'], account.address);
    assert.equal(claims['login_type'], 'wallet');
    await t.close();
  });

  test('a wallet that refuses to sign: the refusal is announced and nothing is sent', async () => {
    const t = await openPage(browser);
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = await injectWallet(t.context, account, { decline: true });
    const { page } = t;
    await page.goto((await authorizationUrl(rp)).url);
    await page.getByRole('button', { name: 'Connect wallet' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('You declined the request in your wallet.').waitFor();
    assert.equal(await page.getByRole('status').textContent(), '');
    assert.deepEqual(wallet.signed, []);
    await t.screenshot('login-wallet-declined');
    await t.close();
  });
});
