import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { authorizationRequest, type RelyingParty, registerRelyingParty } from '../oidc/flow-helpers.ts';
import {
  assertFocusVisible,
  chromiumMissing,
  focused,
  injectWallet,
  launchChromium,
  openPage,
  serveStandIn,
  type TestPage,
} from './browser.ts';
import {
  type CredentialShop,
  credentialShop,
  fragmentOf,
  presentationRequest,
  RP_ORIGIN,
  registerVerifier,
  VERIFIER_ORIGIN,
  VERIFIER_REDIRECT_URI,
} from './flows.ts';

describe("the person's wallet page in Chromium", { skip: chromiumMissing }, () => {
  let browser: Browser;
  let server: TestServer;
  let rp: RelyingParty;
  let shop: CredentialShop;
  let verifierId: string;

  before(async () => {
    [browser, server] = await Promise.all([launchChromium(), startTestServer('sqlite')]);
    rp = await registerRelyingParty(server);
    shop = await credentialShop(server);
    verifierId = await registerVerifier(server);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Someone who signed up at the relying party and holds credentials with these first names. */
  async function holder(firstNames: string[]) {
    const account = privateKeyToAccount(generatePrivateKey());
    const user = await logInUser(server, rp, account);
    const ids: string[] = [];
    for (const firstName of firstNames)
      ids.push(await shop.store(user.did, { first_name: firstName, last_name: 'Lovelace' }));
    return { account, user, ids };
  }

  /** A fresh browser with the person's wallet, logged in to /wallet through the log-in page. */
  async function openWallet(
    account: PrivateKeyAccount,
    screenshot?: string,
  ): Promise<{ t: TestPage; page: Page }> {
    const t = await openPage(browser);
    await serveStandIn(t.context, VERIFIER_ORIGIN, 'Verifier');
    await serveStandIn(t.context, RP_ORIGIN, 'Relying Party');
    await injectWallet(t.context, account);
    const { page } = t;
    await page.goto(`${server.url}/wallet`);
    assert.match(new URL(page.url()).pathname, /^\/interaction\/[^/]+$/);
    await page.getByRole('heading', { level: 1, name: 'Log in to your wallet' }).waitFor();
    if (screenshot) await t.screenshot(screenshot);
    await page.getByRole('button', { name: 'Connect wallet' }).click();
    await page.waitForURL(`${server.url}/wallet`);
    await page.getByRole('heading', { level: 1, name: 'Your wallet' }).waitFor();
    return { t, page };
  }

  const credentialItems = (page: Page) => page.locator('ul.credentials > li');

  const listed = async (bearer: Record<string, string>) => {
    const answer = await server.request('GET', '/v1/openidc/credentials', { headers: bearer });
    return (answer.body as { data: Array<{ credentialSubject: { first_name: string } }> }).data.map(
      (c) => c.credentialSubject.first_name,
    );
  };

  test('by mouse: log in, open the claims, delete with confirmation, share, read the history, sign out', async () => {
    const { account, user } = await holder(['Ada', 'Augusta']);
    const { t, page } = await openWallet(account, 'wallet-login');
    assert.equal(await credentialItems(page).count(), 2);
    assert.match(await page.getByRole('heading', { level: 2, name: /Credentials \(2\)/ }).innerText(), /2/);

    // Readable names (issue #29): the type in words as the title, the issuer's DID shortened,
    // the full DID one disclosure away.
    const issuerDid = shop.issuer.did;
    assert.equal(await page.getByRole('heading', { level: 3, name: 'Person credential' }).count(), 2);
    const firstCard = await credentialItems(page).first().innerText();
    assert.doesNotMatch(firstCard, /PersonCredential/);
    assert.match(firstCard, /Issued by did:key:\S{8}…\S{6} · ldp_vc/);
    assert.ok(!firstCard.includes(issuerDid), 'the full DID is not shown until asked for');
    await credentialItems(page).first().getByText("Show the issuer's full identifier").click();
    assert.equal(
      await credentialItems(page).first().locator('details.identifier code').innerText(),
      issuerDid,
    );

    const ada = credentialItems(page).filter({ hasText: 'Ada' });
    await ada.getByText(/Show its \d+ claims/).click();
    const claims = await ada.locator('dl.claims').innerText();
    assert.match(claims, /first_name\s+Ada/);
    assert.match(claims, /last_name\s+Lovelace/);
    await t.screenshot('wallet-claims-open');

    await credentialItems(page)
      .filter({ hasText: 'Augusta' })
      .getByRole('button', { name: 'Delete…' })
      .click();
    const dialog = page.getByRole('dialog', { name: /Delete Person credential\?/ });
    await dialog.waitFor();
    await t.screenshot('wallet-delete-confirmation');
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Person credential was deleted.' }).waitFor();
    assert.equal(await credentialItems(page).count(), 1);
    assert.match(await credentialItems(page).innerText(), /Issued by did:key:/);
    assert.deepEqual(await listed(user.bearer), ['Ada'], 'gone from the API, the other stays');

    // A presentation to the registered verifier: the session says who it is, so consent comes at once.
    const request = presentationRequest(server, verifierId);
    await page.goto(request.url);
    await page.getByRole('button', { name: 'Share' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${VERIFIER_REDIRECT_URI}#`));
    assert.equal(fragmentOf(page.url()).get('state'), request.state);

    await page.goto(`${server.url}/wallet`);
    const history = page.getByRole('region', { name: 'History' });
    const shared = await history.getByRole('listitem').first().innerText();
    assert.match(
      shared,
      /shared credentialSubject\.first_name of Person credential with Bar & Grill Age Check: delivered/,
    );
    assert.doesNotMatch(shared, /last_name/);
    assert.match(await history.innerText(), /arrived from Issuer/);
    await t.screenshot('wallet-history');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${server.url}/wallet/signed-out`);
    await page.getByRole('heading', { level: 1, name: 'You are signed out' }).waitFor();
    await t.screenshot('wallet-signed-out');
    await page.goto(`${server.url}/wallet`);
    await page.getByRole('heading', { level: 1, name: 'Log in to your wallet' }).waitFor();
    // Single sign-on is over too: prompt=none, sent with this browser's cookies, answers
    // login_required. (Playwright routes only the first request of a redirect chain, so the
    // redirect is read from the answer rather than followed to the relying party.)
    const { url } = await authorizationRequest(rp, { prompt: 'none' });
    const silent = await t.context.request.get(url, { maxRedirects: 0 });
    assert.equal(silent.status(), 303);
    const back = new URL(silent.headers()['location']!);
    assert.equal(back.origin, RP_ORIGIN);
    assert.equal(back.searchParams.get('error'), 'login_required');
    await t.close();
  });

  test('by keyboard alone: claims, a cancelled and a confirmed deletion, visible focus throughout', async () => {
    const { account, user } = await holder(['Ada', 'Augusta']);
    const { t, page } = await openWallet(account);
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'button "Sign out"');
    await assertFocusVisible(page);
    // The issuer's full identifier opens from the keyboard (issue #29).
    await page.keyboard.press('Tab');
    const disclosure = await page.locator(':focus').evaluate((e) => `${e.tagName} ${e.textContent}`);
    assert.equal(disclosure, "SUMMARY Show the issuer's full identifier");
    await assertFocusVisible(page);
    await page.keyboard.press('Enter');
    assert.equal(
      await credentialItems(page).first().locator('details.identifier code').innerText(),
      shop.issuer.did,
    );
    await page.keyboard.press('Tab');
    const summary = await page.locator(':focus').evaluate((e) => `${e.tagName} ${e.textContent}`);
    assert.match(summary, /^SUMMARY Show its \d+ claims$/);
    await assertFocusVisible(page);
    await page.keyboard.press('Enter');
    const first = credentialItems(page).first();
    assert.equal(
      await first.locator('details:has(dl.claims)').evaluate((d) => (d as unknown as { open: boolean }).open),
      true,
    );
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'button "Delete…"');
    await assertFocusVisible(page);
    const firstName = /first_name\s+(\w+)/.exec(await first.innerText())![1]!;

    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    assert.equal(await focused(page), 'button "Keep it"');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await focused(page), 'button "Delete…"', 'focus returns to the control that opened it');
    assert.equal(await credentialItems(page).count(), 2);

    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(page), 'button "Delete"');
    await assertFocusVisible(page);
    await t.screenshot('wallet-keyboard-confirm');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'was deleted' }).waitFor();
    assert.equal(await credentialItems(page).count(), 1);
    assert.match(await focused(page), /^heading "Credentials \(1\)"/);
    assert.deepEqual(await listed(user.bearer), [firstName === 'Ada' ? 'Augusta' : 'Ada']);
    await t.close();
  });

  /** Whether the API still knows the account: its access token works only while it exists. */
  const accountExists = async (bearer: Record<string, string>) =>
    (await server.request('GET', '/v2/openidc/user', { headers: bearer })).status === 200;

  test('by mouse: "Delete this account" asks first, then erases the account and signs the person out', async () => {
    const { account, user } = await holder(['Ada']);
    const { t, page } = await openWallet(account);
    await page.getByRole('link', { name: 'Download all your data (JSON)' }).waitFor();
    await page.getByRole('button', { name: 'Delete this account…' }).click();
    const dialog = page.getByRole('dialog', { name: /Delete your account at Relying Party\?/ });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /its 1 credentials and its history are erased for good/);
    await t.screenshot('wallet-erase-confirmation');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await accountExists(user.bearer), true, 'keeping it erases nothing');

    await page.getByRole('button', { name: 'Delete this account…' }).click();
    await dialog.getByRole('button', { name: 'Delete the account' }).click();
    await page.waitForURL(`${server.url}/wallet/account-deleted`);
    await page.getByRole('heading', { level: 1, name: 'Your account was deleted' }).waitFor();
    await t.screenshot('wallet-account-deleted');
    assert.equal(await accountExists(user.bearer), false);
    const cookies = await t.context.cookies(server.url);
    assert.equal(
      cookies.find((c) => c.name === 'coffer_session'),
      undefined,
      'the session cookie is gone',
    );
    await t.close();
  });

  test('by keyboard: reach "Delete this account", cancel with Escape, confirm with Enter', async () => {
    const { account, user } = await holder(['Ada', 'Augusta']);
    const { t, page } = await openWallet(account);
    // Reached by Tab from the download link before it, as a keyboard user would.
    await page.getByRole('link', { name: 'Download all your data (JSON)' }).focus();
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'button "Delete this account…"');
    await assertFocusVisible(page);

    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: /Delete your account/ });
    await dialog.waitFor();
    assert.equal(await focused(page), 'button "Keep it"', 'the safe choice has the focus');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await focused(page), 'button "Delete this account…"', 'focus returns to the control');
    assert.equal(await accountExists(user.bearer), true);

    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(page), 'button "Delete the account"');
    await assertFocusVisible(page);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}/wallet/account-deleted`);
    assert.equal(await accountExists(user.bearer), false);
    await t.close();
  });

  test('a phone-sized screen: nothing scrolls sideways', async () => {
    const { account } = await holder(['Ada']);
    const { t, page } = await openWallet(account);
    await page.setViewportSize({ width: 320, height: 640 });
    await credentialItems(page)
      .first()
      .getByText(/Show its \d+ claims/)
      .click();
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    assert.equal(typeof overflow, 'number');
    assert.ok((overflow as number) <= 0, `the page is ${overflow}px wider than the screen`);
    await t.screenshot('wallet-phone');
    await t.close();
  });
});
