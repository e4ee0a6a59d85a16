import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { codeFromOutbox, type RelyingParty, registerRelyingParty } from '../oidc/flow-helpers.ts';
import { chromiumMissing, injectWallet, launchChromium, openPage, type TestPage } from './browser.ts';
import {
  authorizationUrl,
  type CredentialShop,
  credentialShop,
  presentationRequest,
  registerVerifier,
  walletHolder,
} from './flows.ts';

/**
 * What every page state must have, checked in the browser's accessibility tree: a language,
 * a title, one main landmark and one h1, an accessible name from a <label> for every input
 * (getByLabel finds each input by its label's text), a name for every button, and the alert
 * and status regions that announce what the page's script reports.
 */
async function assertAccessibleBasics(page: Page, state: string): Promise<void> {
  assert.equal(await page.locator('html').getAttribute('lang'), 'en', `${state}: lang`);
  assert.ok((await page.title()).trim(), `${state}: a title`);
  assert.equal(await page.getByRole('main').count(), 1, `${state}: one main landmark`);
  assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1, `${state}: one h1`);
  assert.equal(await page.locator('h1').count(), 1, `${state}: one h1 element`);

  for (const input of await page.locator('input, select, textarea').all()) {
    const { id, labels } = await input.evaluate((element) => ({
      id: element.id as string,
      labels: [...element.labels].map((label) => (label.textContent as string).trim()),
    }));
    assert.equal(labels.length, 1, `${state}: #${id} has one <label>`);
    const byLabel = page.getByLabel(labels[0]!, { exact: true });
    assert.equal(await byLabel.count(), 1, `${state}: the label "${labels[0]}" names one control`);
    assert.equal(await byLabel.getAttribute('id'), id, `${state}: the label "${labels[0]}" names #${id}`);
    if (await input.isVisible()) {
      const snapshot = await input.ariaSnapshot();
      assert.match(snapshot, /^- \w+ "[^"]+"/, `${state}: #${id} has an accessible name (${snapshot})`);
    }
  }
  for (const button of await page.getByRole('button').all()) {
    assert.match(await button.ariaSnapshot(), /^- button "[^"]+"/, `${state}: every button has a name`);
  }
}

/** The live regions the pages' scripts write into; present (and so announced) even while empty. */
async function assertLiveRegions(page: Page, state: string): Promise<void> {
  const alert = page.getByRole('alert');
  assert.equal(await alert.count(), 1, `${state}: one alert region`);
  assert.equal(await alert.getAttribute('aria-live'), 'assertive');
  const status = page.getByRole('status');
  assert.equal(await status.count(), 1, `${state}: one status region`);
  assert.equal(await status.getAttribute('aria-live'), 'polite');
}

/** WCAG 1.4.10 Reflow: at 320 CSS pixels wide, nothing needs scrolling sideways. */
async function assertReflows(t: TestPage, state: string, screenshot?: string): Promise<void> {
  const { page } = t;
  const previous = page.viewportSize()!;
  await page.setViewportSize({ width: 320, height: 640 });
  const { scrollWidth, clientWidth } = await page.locator('html').evaluate((html) => ({
    scrollWidth: html.scrollWidth as number,
    clientWidth: html.clientWidth as number,
  }));
  if (screenshot) await t.screenshot(screenshot);
  await page.setViewportSize(previous);
  assert.ok(
    scrollWidth <= clientWidth,
    `${state}: ${scrollWidth}px of content in a ${clientWidth}px viewport`,
  );
}

describe('accessibility basics in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let server: TestServer;
  let rp: RelyingParty;
  let shop: CredentialShop;

  before(async () => {
    [browser, server] = await Promise.all([launchChromium(), startTestServer('sqlite')]);
    rp = await registerRelyingParty(server);
    shop = await credentialShop(server);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('log-in page: names, headings, live regions, reflow; a wrong code is announced in the alert region', async () => {
    const t = await openPage(browser);
    const { page } = t;
    await page.goto((await authorizationUrl(rp)).url);
    await assertAccessibleBasics(page, 'log-in page');
    await assertLiveRegions(page, 'log-in page');
    await assertReflows(t, 'log-in page', 'login-page-320px');
    assert.equal(await page.getByRole('region', { name: 'With an Ethereum wallet' }).count(), 1);
    assert.equal(await page.getByRole('region', { name: 'With your e-mail address' }).count(), 1);

    const email = 'a11y@example.com';
    await page.getByRole('textbox', { name: 'E-mail address' }).fill(email);
    await page.getByRole('button', { name: 'Send me a code' }).click();
    const codeInput = page.getByRole('textbox', { name: 'Code from the e-mail' });
    await codeInput.waitFor();
    assert.equal(
      await page.getByRole('status').textContent(),
      `We sent a code to ${email}. Enter it below.`,
      'the status region says what happened',
    );
    assert.match(
      await codeInput.getAttribute('aria-describedby').then((id) => page.locator(`#${id}`).innerText()),
      /6-digit code to a11y@example\.com\. It is valid for 10 minutes\./,
      'the hint describes the code field',
    );
    await assertAccessibleBasics(page, 'code form');

    const code = await codeFromOutbox(server, email);
    await codeInput.fill(code === '000000' ? '111111' : '000000');
    t.expectErrorResponse(`${new URL(page.url()).pathname}/login/email/verify`, 400);
    await page.getByRole('button', { name: 'Log in' }).click();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: /\S/ }).waitFor();
    assert.match((await alert.textContent())!, /code/i, 'the alert region announces the wrong code');
    assert.equal(await page.getByRole('status').textContent(), '', 'and the status region is cleared');
    await t.screenshot('login-wrong-code');
    await t.close();
  });

  test('consent page, before and after log-in: names, headings, groups, live regions, reflow', async () => {
    const account = await walletHolder(server, rp, shop, ['Ada', 'Augusta']);
    const verifierId = await registerVerifier(server);
    const t = await openPage(browser);
    await injectWallet(t.context, account);
    const { page } = t;
    await page.goto(presentationRequest(server, verifierId).url);
    await assertAccessibleBasics(page, 'consent page, logged out');
    await assertLiveRegions(page, 'consent page, logged out');
    await assertReflows(t, 'consent page, logged out');

    await page.getByRole('button', { name: 'Connect wallet' }).click();
    await page.getByRole('button', { name: 'Share' }).waitFor();
    await assertAccessibleBasics(page, 'consent page');
    await assertLiveRegions(page, 'consent page');
    assert.equal(await page.getByRole('region', { name: 'Who asks' }).count(), 1);
    // The candidates are one radio group named by its legend, so the choice is announced as one.
    const group = page.getByRole('group', { name: 'Asked for: person' });
    assert.equal(await group.getByRole('radio').count(), 2);
    for (const firstName of ['Ada', 'Augusta']) {
      assert.equal(await group.getByRole('radio', { name: new RegExp(`— ${firstName}$`) }).count(), 1);
    }
    await t.screenshot('consent-two-credentials');
    await assertReflows(t, 'consent page', 'consent-two-credentials-320px');
    await t.close();
  });

  test('error page (an unknown interaction): language, one h1, the reason in an alert', async () => {
    const t = await openPage(browser);
    const { page } = t;
    t.expectErrorResponse('/interaction/no-such-interaction', 404);
    const response = await page.goto(`${server.url}/interaction/no-such-interaction`);
    assert.equal(response?.status(), 404);
    await assertAccessibleBasics(page, 'error page');
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'This page cannot continue');
    assert.ok((await page.getByRole('alert').textContent())?.trim(), 'the reason is in an alert');
    await assertReflows(t, 'error page');
    // Chromium asks for the icon of every page; a 404 there would be a console error on each.
    assert.equal((await fetch(`${server.url}/favicon.ico`)).status, 204);
    await t.screenshot('error-page');
    await t.close();
  });
});
