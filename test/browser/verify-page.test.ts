import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer, postForm, resolveRequest } from '../verifier/test-wallet.ts';
import {
  presentSdJwt,
  sdJwtQuery,
  startVerifierWorld,
  type VerifierWorld,
} from '../verifier/verifier-helpers.ts';
import {
  assertFocusVisible,
  chromiumMissing,
  focused,
  launchChromium,
  openPage,
  type TestPage,
  tabThrough,
} from './browser.ts';

const QR_NAME = /^QR code/;
const CREATED = 'Scan the code with your wallet, or open your wallet on this device.';
const DONE = /^Done: your credential was verified\./;

/**
 * GET /verify/{id} in Chromium (issue #30): the page a tenant sends people to. It names the
 * verifier, shows a QR code and an "Open your wallet" link carrying the openid4vp:// request, and
 * follows the request's state by itself while a wallet (the foreign test wallet, not Coffer's)
 * fetches and answers it. Accessible, phone-sized, keyboard-usable; screenshots under
 * test-artifacts/browser/verify-*.png.
 */
describe('the /verify page in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let world: VerifierWorld;
  let holder: Awaited<ReturnType<typeof generateKeyPair>>;
  let credential: string;

  before(async () => {
    [browser, world] = await Promise.all([launchChromium(), startVerifierWorld('sqlite')]);
    holder = await generateKeyPair('ES256', { extractable: true });
    credential = await issueSdJwtVc(world.issuer, {
      holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
    });
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  async function createRequest() {
    const created = await world.createRequest({
      dcql_query: sdJwtQuery(PID_VCT, [['given_name']]),
    });
    assert.equal(created.status, 201, created.text);
    return created.body.data as { id: string; authorization_request: string; page: string };
  }

  /** The page as a person's browser opens it (the server itself; the front only adds TLS). */
  const pageUrl = (id: string) => `${world.server.url}/verify/${id}`;

  /** The state region: one polite status region, always in the accessibility tree. */
  const stateRegion = (page: Page) => page.getByRole('status');

  /** WCAG 1.4.3: the contrast of an element's text with its (or the nearest opaque ancestor's) background. */
  async function contrastOf(page: Page, selector: string): Promise<number> {
    const [text, background] = await page.locator(selector).evaluate((element) => {
      const view = element.ownerDocument.defaultView;
      const rgb = (value: string) => (value.match(/[\d.]+/g) ?? []).map(Number);
      let node = element;
      let back = rgb(view.getComputedStyle(node).backgroundColor);
      while ((back[3] ?? 1) === 0 && node.parentElement) {
        node = node.parentElement;
        back = rgb(view.getComputedStyle(node).backgroundColor);
      }
      return [rgb(view.getComputedStyle(element).color), back];
    });
    const luminance = ([r, g, b]: number[]) =>
      [r!, g!, b!]
        .map((c) => c / 255)
        .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
        .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i]!, 0);
    const [light, dark] = [luminance(text), luminance(background)].sort((a, b) => b - a);
    return (light! + 0.05) / (dark! + 0.05);
  }

  /** WCAG 1.4.10 at a phone's size: nothing scrolls sideways. */
  async function assertFitsPhone(t: TestPage, screenshot: string): Promise<void> {
    const { page } = t;
    const previous = page.viewportSize()!;
    await page.setViewportSize({ width: 360, height: 740 });
    const { scrollWidth, clientWidth } = await page.locator('html').evaluate((html) => ({
      scrollWidth: html.scrollWidth as number,
      clientWidth: html.clientWidth as number,
    }));
    await t.screenshot(screenshot);
    await page.setViewportSize(previous);
    assert.ok(scrollWidth <= clientWidth, `${scrollWidth}px of content in a ${clientWidth}px viewport`);
  }

  test('created: the verifier named, a QR code with a name, the openid4vp:// link, reachable by Tab with visible focus, phone-sized', async () => {
    const created = await createRequest();
    assert.equal(created.page, `${world.front.url}/verify/${created.id}`);
    const t = await openPage(browser);
    const { page } = t;
    const response = await page.goto(pageUrl(created.id));
    assert.equal(response?.status(), 200);

    assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    assert.match(await page.title(), /Shop/);
    assert.equal(await page.getByRole('main').count(), 1);
    assert.equal(
      await page.getByRole('heading', { level: 1 }).textContent(),
      'Shop asks for a credential',
      "the verifier's name, as the tenant is called",
    );
    const qr = page.getByRole('img', { name: QR_NAME });
    assert.equal(await qr.count(), 1, 'the QR code is an image with an accessible name');
    assert.equal(await qr.evaluate((element) => element.tagName.toLowerCase()), 'svg');
    assert.ok(await qr.isVisible());
    const link = page.getByRole('link', { name: 'Open your wallet' });
    assert.equal(await link.getAttribute('href'), created.authorization_request);
    assert.match(created.authorization_request, /^openid4vp:\/\/\?client_id=/);
    assert.equal(await stateRegion(page).textContent(), CREATED);
    assert.equal(await stateRegion(page).getAttribute('aria-live'), 'polite');

    for (const selector of ['h1', '#verify-state', 'a.open']) {
      const contrast = await contrastOf(page, selector);
      assert.ok(contrast >= 4.5, `${selector}: contrast ${contrast.toFixed(2)} is at least 4.5:1`);
    }

    // Keyboard: the link is the first stop, and its focus shows.
    await tabThrough(page, ['link "Open your wallet"']);
    await t.screenshot('verify-created');
    await assertFitsPhone(t, 'verify-created-phone');
    await t.close();
  });

  test('the state follows the wallet without a reload: retrieved, then Done, with the QR code and link gone', async () => {
    const created = await createRequest();
    const t = await openPage(browser);
    const { page } = t;
    await page.goto(pageUrl(created.id));
    // A value on the window survives only as long as the document: a reload would drop it.
    await page.evaluate('window.sameDocument = true');
    let navigations = 0;
    page.on('framenavigated', () => navigations++);
    await page.getByRole('link', { name: 'Open your wallet' }).focus();

    const request = await resolveRequest(created.authorization_request, { walletNonce: 'browser-test' });
    await stateRegion(page)
      .filter({ hasText: /^Your wallet has the request\./ })
      .waitFor();
    assert.ok(await page.getByRole('img', { name: QR_NAME }).isVisible(), 'still open: the code stays');

    const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
      aud: request.clientId,
      nonce: request.payload.nonce,
    });
    assert.equal((await answer(request, { pid: [presentation] })).status, 200);
    await stateRegion(page).filter({ hasText: DONE }).waitFor({ timeout: 10_000 });
    assert.equal((await world.readResult(created.id)).body.data.status, 'verified');

    assert.equal(
      await page.evaluate('window.sameDocument'),
      true,
      'the same document: the page was not reloaded',
    );
    assert.equal(navigations, 0);
    assert.equal(await page.getByRole('img', { name: QR_NAME }).count(), 0, 'the QR code is hidden');
    assert.equal(await page.getByRole('link', { name: 'Open your wallet' }).count(), 0, 'the link is hidden');
    assert.ok(!(await page.getByRole('img', { name: QR_NAME }).isVisible()));
    // The link had the focus; it moves to the state, so the keyboard is not left on nothing.
    assert.equal(await focused(page), 'status');
    await t.screenshot('verify-verified');
    await assertFitsPhone(t, 'verify-verified-phone');
    assert.ok(!(await page.content()).includes('Ada'), 'no claim is ever shown on the page');
    await t.close();
  });

  test("a declined answer (anyone who saw the code can send one) leaves the code up; the wallet's presentation then ends it", async () => {
    const created = await createRequest();
    const request = await resolveRequest(created.authorization_request);
    const declined = await postForm(request.payload.response_uri, {
      error: 'access_denied',
      state: request.payload.state,
    });
    assert.equal(declined.status, 200);
    const t = await openPage(browser);
    const { page } = t;
    await page.goto(pageUrl(created.id));
    assert.match(
      (await stateRegion(page).textContent())!,
      /^A wallet declined to share\. You can still share/,
    );
    assert.ok(await page.getByRole('img', { name: QR_NAME }).isVisible(), 'the code stays');
    assert.equal(await page.getByRole('link', { name: 'Open your wallet' }).count(), 1);
    await t.screenshot('verify-declined');
    const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
      aud: request.clientId,
      nonce: request.payload.nonce,
    });
    assert.equal((await answer(request, { pid: [presentation] })).status, 200);
    await stateRegion(page).filter({ hasText: DONE }).waitFor({ timeout: 10_000 });
    assert.equal(await page.getByRole('img', { name: QR_NAME }).count(), 0, 'a final state shows no code');
    await t.close();
  });

  test('an unknown request: the error page, 404, its reason in an alert', async () => {
    const t = await openPage(browser);
    const { page } = t;
    t.expectErrorResponse('/verify/no-such-request', 404);
    const response = await page.goto(`${world.server.url}/verify/no-such-request`);
    assert.equal(response?.status(), 404);
    assert.equal(await page.getByRole('main').count(), 1);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'This request cannot be shown');
    assert.ok((await page.getByRole('alert').textContent())?.trim(), 'the reason is in an alert');
    await t.screenshot('verify-unknown');
    await t.close();
  });

  test('keyboard only: Tab reaches the link from the top, Shift+Tab leaves it, focus visible', async () => {
    const created = await createRequest();
    const t = await openPage(browser);
    const { page } = t;
    await page.goto(pageUrl(created.id));
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'link "Open your wallet"');
    await assertFocusVisible(page);
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(page), '(nothing: the document body)', 'nothing else takes the focus');
    await t.close();
  });
});
