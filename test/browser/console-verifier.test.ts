import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import type { Browser } from 'playwright-core';
import { addAdmin } from '../console/console-helpers.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { codeFromOutbox } from '../oidc/flow-helpers.ts';
import { answer, resolveRequest } from '../verifier/test-wallet.ts';
import { presentSdJwt, startVerifierWorld, type VerifierWorld } from '../verifier/verifier-helpers.ts';
import {
  assertNoSidewaysScroll,
  chromiumMissing,
  launchChromium,
  openPage,
  type TestPage,
  tabThrough,
  tabTo,
} from './browser.ts';

/**
 * The console's verifier pages in Chromium (issue #43): an operator makes a presentation request
 * with the form, a wallet that is not Coffer's answers it from the page's openid4vp:// link, and
 * the page, which follows the request by itself, shows the verified result with every check. At
 * 390 px by keyboard alone, at 1280 px by mouse. Screenshots: test-artifacts/browser/console-verifier-*.png
 * (docs/images/console-verifier-*.png are copies of two of them).
 */
describe('the console verifier pages in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let world: VerifierWorld;
  let holder: Awaited<ReturnType<typeof generateKeyPair>>;
  let credential: string;
  const email = 'operator@shop.example';

  before(async () => {
    [browser, world] = await Promise.all([launchChromium(), startVerifierWorld('sqlite')]);
    await addAdmin(world.server, world.clientId, { email }, 'operator');
    holder = await generateKeyPair('ES256', { extractable: true });
    credential = await issueSdJwtVc(world.issuer, {
      holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
    });
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  /** The wallet, in Node: it opens the page's link and presents the two claims asked for. */
  async function walletAnswers(link: string): Promise<void> {
    const request = await resolveRequest(link);
    const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
      aud: request.clientId,
      nonce: request.payload.nonce,
    });
    assert.equal((await answer(request, { credential: [presentation] })).status, 200);
  }

  async function assertVerified(t: TestPage, width: number): Promise<void> {
    const { page } = t;
    await page.getByRole('heading', { name: 'Result' }).waitFor({ timeout: 15_000 });
    assert.match((await page.getByRole('status').textContent())!, /Verified: every check passed/);
    // Below 40rem the tables are labelled lists (no table roles): rows are found by their text.
    for (const check of ['issuer_signature', 'issuer_trusted', 'nonce', 'sd_hash']) {
      const row = page
        .locator('tr')
        .filter({ has: page.locator('td', { hasText: new RegExp(`^${check}$`) }) });
      assert.match((await row.first().textContent())!, /passed/, check);
    }
    await page.locator('td', { hasText: /^Lovelace$/ }).waitFor();
    assert.equal(await page.getByRole('img', { name: /^QR code/ }).count(), 0);
    await assertNoSidewaysScroll(page, 'the result');
    await t.screenshot(`console-verifier-result-${width}`);
  }

  test('at 390 px, by keyboard alone: log in, ask with the form, read the verified result', async () => {
    const t = await openPage(browser, { trustTestTls: true });
    const { page } = t;
    await page.setViewportSize({ width: 390, height: 900 });
    await page.goto(`${world.front.url}/console`);
    await tabTo(page, 'textbox "E-mail address"');
    await page.keyboard.type(email);
    await page.keyboard.press('Enter');
    await page.getByRole('textbox', { name: 'Code from the e-mail' }).waitFor();
    await page.keyboard.type(await codeFromOutbox(world.server, email));
    await page.keyboard.press('Enter');
    await page.waitForURL(`${world.front.url}/console/clients/${world.clientId}`);

    await tabTo(page, 'link "Verifier"');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${world.front.url}/console/clients/${world.clientId}/verifier`);
    await tabTo(page, 'link "New request"');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New presentation request' }).waitFor();
    await tabTo(page, 'combobox "Credential format"');
    await tabThrough(page, ['textbox "Credential type"']);
    await page.keyboard.type(PID_VCT);
    await tabThrough(page, ['textbox "Claims to ask for (optional)"']);
    await page.keyboard.type('given_name');
    await page.keyboard.press('Enter');
    await page.keyboard.type('family_name');
    await assertNoSidewaysScroll(page, 'the form');
    await t.screenshot('console-verifier-form-390');
    await tabTo(page, 'button "Make the request"');
    await page.keyboard.press('Enter');

    await page.waitForURL(/\/verifier\/requests\/[A-Za-z0-9_-]+$/);
    const qr = page.getByRole('img', { name: /^QR code/ });
    assert.ok(await qr.isVisible());
    await tabTo(page, 'link "Open in a wallet"');
    const link = await page.getByRole('link', { name: 'Open in a wallet' }).getAttribute('href');
    assert.match(link!, /^openid4vp:\/\//);
    await assertNoSidewaysScroll(page, 'the QR page');
    await t.screenshot('console-verifier-qr-390');

    // The page reloads itself once the answer is in.
    await walletAnswers(link!);
    await assertVerified(t, 390);
    await t.close();
  });

  test('at 1280 px, by mouse: ask with the form, read the verified result', async () => {
    const t = await openPage(browser, { trustTestTls: true });
    const { page } = t;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${world.front.url}/console`);
    await page.getByRole('textbox', { name: 'E-mail address' }).fill(email);
    await page.getByRole('button', { name: 'Send me a code' }).click();
    const codeBox = page.getByRole('textbox', { name: 'Code from the e-mail' });
    await codeBox.waitFor();
    await codeBox.fill(await codeFromOutbox(world.server, email));
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${world.front.url}/console/clients/${world.clientId}`);

    await page.getByRole('link', { name: 'Verifier' }).click();
    await page.getByRole('link', { name: 'New request' }).click();
    await page.getByRole('combobox', { name: 'Credential format' }).selectOption('dc+sd-jwt');
    await page.getByRole('textbox', { name: 'Credential type' }).fill(PID_VCT);
    await page.getByRole('textbox', { name: 'Claims to ask for (optional)' }).fill('given_name\nfamily_name');
    await page.getByRole('button', { name: 'Make the request' }).click();
    await page.waitForURL(/\/verifier\/requests\/[A-Za-z0-9_-]+$/);
    const link = await page.getByRole('link', { name: 'Open in a wallet' }).getAttribute('href');
    await walletAnswers(link!);
    await assertVerified(t, 1280);

    await page.getByRole('link', { name: 'All requests' }).click();
    await page.getByRole('cell', { name: 'verified' }).first().waitFor();
    await t.close();
  });
});
