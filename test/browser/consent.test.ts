import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { verifyWithStock } from '../credentials/stock-issuer.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { type RelyingParty, registerRelyingParty } from '../oidc/flow-helpers.ts';
import { chromiumMissing, focused, injectWallet, launchChromium, openPage, serveStandIn } from './browser.ts';
import {
  type CredentialShop,
  credentialShop,
  fragmentOf,
  presentationRequest,
  registerVerifier,
  VERIFIER_ORIGIN,
  VERIFIER_REDIRECT_URI,
  walletHolder,
} from './flows.ts';

describe('OpenID4VP consent in Chromium', { skip: chromiumMissing }, () => {
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

  /**
   * A person with a wallet account holding person credentials with these first names; a fresh
   * browser (not logged in to Coffer) with their wallet, sent to the consent page by the verifier.
   */
  async function arriveAtConsent(firstNames: string[], screenshot?: string) {
    const account = await walletHolder(server, rp, shop, firstNames);
    const t = await openPage(browser);
    await serveStandIn(t.context, VERIFIER_ORIGIN, 'Verifier');
    await injectWallet(t.context, account);
    const request = presentationRequest(server, verifierId);
    const { page } = t;
    await page.goto(request.url);
    assert.match(new URL(page.url()).pathname, /^\/interaction\/[^/]+$/);
    await page
      .getByRole('heading', { level: 1, name: 'Share credentials with Bar & Grill Age Check?' })
      .waitFor();
    // Not logged in: the page says who asks and offers the log-in before any credential.
    assert.equal(await page.getByRole('radio').count(), 0);
    assert.match(
      await page.getByRole('region', { name: 'Who asks' }).innerText(),
      /Bar & Grill Age Check asks to see/,
    );
    if (screenshot) await t.screenshot(screenshot);
    await page.getByRole('button', { name: 'Connect wallet' }).click();
    await page.getByRole('button', { name: 'Share' }).waitFor();
    return { t, page, request };
  }

  /** The browser at the verifier: its fragment. */
  async function landedAtVerifier(page: Page) {
    await page.waitForURL((url) => url.href.startsWith(`${VERIFIER_REDIRECT_URI}#`));
    return fragmentOf(page.url());
  }

  /** The one presentation for the "person" query, checked for this verifier and nonce. */
  async function presentedCredential(fragment: URLSearchParams, nonce: string) {
    const vpToken = JSON.parse(fragment.get('vp_token')!);
    assert.deepEqual(Object.keys(vpToken), ['person']);
    assert.equal(vpToken.person.length, 1);
    const presentation = vpToken.person[0];
    assert.equal(presentation.proof.challenge, nonce);
    assert.equal(presentation.proof.domain, verifierId);
    const [credential] = presentation.verifiableCredential;
    const verdict = await verifyWithStock(credential, new Uint8Array());
    assert.ok(verdict.verified, 'the stock bbs-2023 verifier accepts the disclosed credential');
    return credential;
  }

  test('log in with the wallet, see who asks and what, share: the verifier gets a vp_token and its state', async () => {
    const { t, page, request } = await arriveAtConsent(['Ada'], 'consent-login');
    const form = page.locator('#consent-form');
    assert.match(await form.innerText(), /Asks for: credentialSubject › first_name\./);
    // Readable names (issue #29): the type in words, the issuer's DID shortened, the full DID on request.
    const choice = page.getByRole('radio', { name: /^Person credential from did:key:\S{8}…\S{6} — Ada$/ });
    assert.equal(await choice.count(), 1);
    assert.ok(
      !(await form.innerText()).includes(shop.issuer.did),
      'the full DID is not shown until asked for',
    );
    await page.getByText("Show the issuer's full identifier").click();
    assert.equal(await form.locator('details.identifiers code').innerText(), shop.issuer.did);
    assert.ok(await choice.isChecked(), 'the only candidate is chosen');
    assert.match(await choice.locator('xpath=..').innerText(), /first_name\s+Ada/);
    await t.screenshot('consent-page');

    await page.getByRole('button', { name: 'Share' }).click();
    const fragment = await landedAtVerifier(page);
    assert.equal(fragment.get('state'), request.state);
    const credential = await presentedCredential(fragment, request.nonce);
    assert.equal(credential.credentialSubject.first_name, 'Ada');
    assert.equal(credential.credentialSubject.last_name, undefined, 'only the requested claim is disclosed');
    await t.screenshot('consent-shared-at-verifier');
    await t.close();
  });

  test('decline: the verifier gets access_denied and its state, and no vp_token', async () => {
    const { t, page, request } = await arriveAtConsent(['Ada']);
    await page.getByRole('button', { name: 'Decline' }).click();
    const fragment = await landedAtVerifier(page);
    assert.equal(fragment.get('error'), 'access_denied');
    assert.equal(fragment.get('state'), request.state);
    assert.equal(fragment.get('vp_token'), null);
    await t.screenshot('consent-declined-at-verifier');
    await t.close();
  });

  test('two matching credentials: the person picks the second with the keyboard, and that one is shared', async () => {
    const { t, page, request } = await arriveAtConsent(['Ada', 'Augusta']);
    const choices = page.getByRole('radio');
    assert.equal(await choices.count(), 2);
    assert.ok(await choices.nth(0).isChecked());
    const secondText = await choices.nth(1).locator('xpath=..').innerText();
    const secondName = /first_name\s+(\w+)/.exec(secondText)![1]!;

    // Tab reaches the checked radio first; the arrow key moves the choice within the group.
    await page.keyboard.press('Tab');
    assert.ok(await choices.nth(0).evaluate((element) => element.matches(':focus') as boolean));
    await page.keyboard.press('ArrowDown');
    assert.ok(await choices.nth(1).isChecked(), 'the second credential is chosen');
    assert.ok(!(await choices.nth(0).isChecked()));
    await t.screenshot('consent-second-credential-chosen');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'button "Share"');
    await page.keyboard.press('Enter');

    const fragment = await landedAtVerifier(page);
    assert.equal(fragment.get('state'), request.state);
    const credential = await presentedCredential(fragment, request.nonce);
    assert.equal(credential.credentialSubject.first_name, secondName);
    await t.close();
  });
});
