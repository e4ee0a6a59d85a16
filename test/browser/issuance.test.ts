import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startHaipWorld } from '../oid4vci/haip-helpers.ts';
import { fetchWithCa, type IssuanceWorld, listed, startIssuanceWorld } from '../oid4vci/issuance-helpers.ts';
import {
  assertFocusVisible,
  chromiumMissing,
  focused,
  injectWallet,
  launchChromium,
  openPage,
  serveStandIn,
} from './browser.ts';

describe('OpenID4VCI credential offer in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let world: IssuanceWorld;

  before(async () => {
    [browser, world] = await Promise.all([launchChromium(), startIssuanceWorld('sqlite')]);
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  /** A fresh browser with the person's wallet, at the offer link the issuer gave them. */
  async function arriveAtOffer(txCode?: string) {
    const { byReferenceQuery } = await world.issuer.createOffer({
      configurationIds: ['pid-sd-jwt'],
      grant: 'pre-authorized',
      ...(txCode ? { txCode: { value: txCode, length: txCode.length, input_mode: 'numeric' as const } } : {}),
    });
    const t = await openPage(browser);
    // The issuer's logo is on https://issuer.example, which this machine cannot reach.
    await serveStandIn(t.context, 'https://issuer.example', 'Logo');
    await injectWallet(t.context, world.account);
    await t.page.goto(`${world.server.url}/v1/oid4vci/offer?${byReferenceQuery}`);
    assert.match(new URL(t.page.url()).pathname, /^\/interaction\/[^/]+$/);
    await t.page.getByRole('heading', { level: 1, name: 'Add credentials from Example Issuer?' }).waitFor();
    return t;
  }

  test('by mouse: log in with the wallet, see the issuer (unverified) and the credential, enter the code, add it', async () => {
    const before = (await listed(world)).length;
    const t = await arriveAtOffer('271828');
    const { page } = t;
    assert.match(await page.locator('main').innerText(), /Unverified issuer/);
    assert.match(await page.locator('ul.offered').innerText(), /Personal ID \(SD-JWT VC\)/);
    await page.getByRole('button', { name: 'Connect wallet' }).click();
    await page.getByRole('button', { name: 'Add to my wallet' }).waitFor();
    await t.screenshot('issuance-offer');

    const code = page.getByRole('textbox', { name: 'Transaction code' });
    await code.fill('000000');
    t.expectErrorResponse(`${new URL(page.url()).pathname}/consent`, 400);
    await page.getByRole('button', { name: 'Add to my wallet' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /did not accept the transaction code/ })
      .waitFor();
    assert.equal(await focused(page), 'textbox "Transaction code"', 'focus goes back to the code');
    await code.fill('271828');
    await page.getByRole('button', { name: 'Add to my wallet' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Added 1 credential to your wallet/ })
      .waitFor();
    await t.screenshot('issuance-added');
    assert.equal((await listed(world)).length, before + 1);
    await t.close();
  });

  test('by keyboard alone: Tab to the code, type it, Tab to "Add to my wallet", Enter; Decline is reachable too', async () => {
    const before = (await listed(world)).length;
    const t = await arriveAtOffer('314159');
    const { page } = t;
    await page.getByRole('button', { name: 'Connect wallet' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Add to my wallet' }).waitFor();
    const reached: string[] = [];
    for (const _ of [1, 2, 3]) {
      await page.keyboard.press('Tab');
      reached.push(await focused(page));
      await assertFocusVisible(page);
    }
    assert.deepEqual(reached, [
      'textbox "Transaction code"',
      'button "Add to my wallet"',
      'button "Decline"',
    ]);
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(page), 'textbox "Transaction code"');
    await page.keyboard.type('314159');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /Added 1 credential/ })
      .waitFor();
    assert.equal((await listed(world)).length, before + 1);
    await t.close();
  });
});

describe('wallet-initiated HAIP issuance from the wallet page in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let world: IssuanceWorld;
  let close: () => Promise<void>;

  before(async () => {
    let haip: Awaited<ReturnType<typeof startHaipWorld>>;
    [browser, haip] = await Promise.all([
      launchChromium(),
      startHaipWorld('sqlite', {}, { signedMetadata: 'trusted' }),
    ]);
    ({ world, close } = haip);
  });
  after(async () => {
    await browser?.close();
    await close?.();
  });

  test('"Add a credential": the issuer address, a choice of its credentials, its authorization page, and the credential in the wallet', async () => {
    const t = await openPage(browser);
    await serveStandIn(t.context, 'https://issuer.example', 'Logo');
    // The issuer's pages sit behind its own test CA; the test fetches them for the browser,
    // where the person would see the issuer's own log-in (this issuer approves at once).
    await t.context.route(`${new URL(world.issuer.credentialIssuer).origin}/**`, async (route) => {
      const answer = await fetchWithCa(world.issuer.tlsCaPem, route.request().url());
      await route.fulfill({
        status: answer.status,
        headers: answer.location ? { location: answer.location } : {},
        body: answer.body,
      });
    });
    await injectWallet(t.context, world.account);
    const { page } = t;
    await page.goto(`${world.server.url}/wallet`);
    await page.getByRole('button', { name: 'Connect wallet' }).click();
    await page.waitForURL(`${world.server.url}/wallet`);
    await page.getByRole('heading', { level: 2, name: 'Add a credential' }).waitFor();
    await page.getByRole('textbox', { name: 'Issuer address' }).fill(world.issuer.credentialIssuer);
    await t.screenshot('wallet-add-credential');
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByRole('heading', { level: 1, name: 'Add credentials from Example Issuer?' }).waitFor();
    assert.match(await page.locator('main').innerText(), /Verified: its metadata is signed by/);
    const choice = page.getByRole('group', { name: 'Which credentials do you want?' });
    assert.equal(await choice.getByRole('checkbox').count(), 3);
    await page.getByRole('button', { name: 'Add to my wallet' }).click();
    await page.getByRole('alert').filter({ hasText: 'Choose at least one credential to add.' }).waitFor();
    await choice.getByRole('checkbox', { name: /Personal ID/ }).check();
    await t.screenshot('issuance-wallet-initiated-choice');
    await page.getByRole('button', { name: 'Add to my wallet' }).click();

    await page.getByRole('heading', { level: 1, name: 'Credentials added' }).waitFor();
    assert.match(await page.locator('main').innerText(), /Added 1 credential to your wallet/);
    await t.screenshot('issuance-wallet-initiated-added');
    const [entry] = await listed(world);
    assert.equal(entry.format, 'dc+sd-jwt');
    assert.equal(world.issuer.events.attestations.length, 2, 'Wallet Attestations at PAR and token');
    assert.equal(world.issuer.events.keyAttestations.length, 1);
    await page.goto(`${world.server.url}/wallet`);
    assert.equal(await page.locator('ul.credentials > li').count(), 1);
    // The names the issuer's metadata displays, not the vct URL (issue #29).
    const card = page.locator('ul.credentials > li');
    await card.getByRole('heading', { level: 3, name: 'Personal ID' }).waitFor();
    assert.doesNotMatch(await card.innerText(), /identity_credential/);
    assert.match(await card.innerText(), /Issued by Example Issuer \(/);
    await t.close();
  });
});
