import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import { type IssuerWorld, startIssuerWorld } from '../issuer/issuer-helpers.ts';
import {
  assertFocusVisible,
  chromiumMissing,
  focused,
  launchChromium,
  openPage,
  tabThrough,
} from './browser.ts';

const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

/**
 * GET /offer/{id} in Chromium (issue #31): the page an issuing tenant sends people to. It names
 * the issuer and what is offered, shows a QR code and an "Add to your wallet" link carrying the
 * openid-credential-offer:// URI, never the tx_code, and is usable by keyboard; a spent or
 * expired offer is an error page. Screenshots under test-artifacts/browser/offer-*.png.
 */
describe('the /offer page in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let world: IssuerWorld;

  before(async () => {
    [browser, world] = await Promise.all([launchChromium(), startIssuerWorld('sqlite')]);
    const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
      format: 'dc+sd-jwt',
      vct: 'https://university.example/degree',
      display: [{ name: 'Bachelor degree' }],
      claims: [{ path: ['given_name'] }],
    });
    assert.equal(put.status, 201, put.text);
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  async function createOffer(extra: Record<string, unknown> = {}) {
    const created = await world.api('POST', '/v1/issuer/offers', {
      configuration_ids: ['degree'],
      claims: { degree: { given_name: 'Ada' } },
      ...extra,
    });
    assert.equal(created.status, 201, created.text);
    return created.body.data as {
      id: string;
      page: string;
      offer_link: string;
      credential_offer_uri: string;
      tx_code?: string;
    };
  }

  test('what is offered, by whom, a named QR code, the openid-credential-offer:// link, no tx_code; Tab reaches the link', async () => {
    const offer = await createOffer({ tx_code: { length: 6 } });
    assert.equal(offer.page, `${world.server.url}/offer/${offer.id}`);
    assert.match(offer.tx_code ?? '', /^\d{6}$/);
    const t = await openPage(browser);
    const { page } = t;
    const response = await page.goto(offer.page);
    assert.equal(response?.status(), 200);
    assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    assert.match(await page.title(), /University/);
    assert.equal(
      await page.getByRole('heading', { level: 1 }).textContent(),
      'University offers you a credential',
    );
    assert.deepEqual(await page.getByRole('main').getByRole('listitem').allTextContents(), [
      'Bachelor degree',
    ]);
    const qr = page.getByRole('img', { name: /^QR code/ });
    assert.equal(await qr.count(), 1, 'the QR code is an image with an accessible name');
    assert.ok(await qr.isVisible());
    const link = page.getByRole('link', { name: 'Add to your wallet' });
    const href = await link.getAttribute('href');
    assert.equal(href, offer.offer_link);
    assert.equal(
      href,
      `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(offer.credential_offer_uri)}`,
    );
    const text = (await page.locator('body').innerText()) ?? '';
    assert.match(text, /transaction code/, 'the page says a code will be asked for');
    assert.ok(!text.includes(offer.tx_code!), 'the page never shows the tx_code');
    assert.ok(!(await page.content()).includes(offer.tx_code!), 'nor carries it in its markup');

    await tabThrough(page, ['link "Add to your wallet"']);
    await t.screenshot('offer-created');
    await t.close();
  });

  test('keyboard only: the link is the one stop, Shift+Tab leaves it, focus visible', async () => {
    const offer = await createOffer();
    const t = await openPage(browser);
    const { page } = t;
    await page.goto(offer.page);
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'link "Add to your wallet"');
    await assertFocusVisible(page);
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(page), '(nothing: the document body)');
    await t.close();
  });

  test('a spent offer (its pre-authorized code redeemed): the error page, 404, its reason in an alert', async () => {
    const offer = await createOffer();
    const document = (await (await fetch(offer.credential_offer_uri)).json()) as {
      grants: Record<string, { 'pre-authorized_code': string }>;
    };
    const token = await world.server.request('POST', '/v2/openidc/token', {
      body: {
        grant_type: PRE_AUTHORIZED,
        'pre-authorized_code': document.grants[PRE_AUTHORIZED]!['pre-authorized_code'],
      },
    });
    assert.equal(token.status, 200, token.text);
    const t = await openPage(browser);
    const { page } = t;
    t.expectErrorResponse(`/offer/${offer.id}`, 404);
    const response = await page.goto(offer.page);
    assert.equal(response?.status(), 404);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'This offer cannot be shown');
    assert.match((await page.getByRole('alert').textContent()) ?? '', /used or has expired/);
    assert.equal(await page.getByRole('link', { name: 'Add to your wallet' }).count(), 0);
    await t.screenshot('offer-spent');
    await t.close();
  });

  test('an expired offer: the same error page, 404', async () => {
    const offer = await createOffer({ expires_in: 1 });
    await sleep(1500);
    const t = await openPage(browser);
    const { page } = t;
    t.expectErrorResponse(`/offer/${offer.id}`, 404);
    const response = await page.goto(offer.page);
    assert.equal(response?.status(), 404);
    assert.match((await page.getByRole('alert').textContent()) ?? '', /used or has expired/);
    await t.close();
  });
});
