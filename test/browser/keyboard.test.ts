import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  codeFromOutbox,
  REDIRECT_URI,
  type RelyingParty,
  registerRelyingParty,
} from '../oidc/flow-helpers.ts';
import {
  assertFocusVisible,
  chromiumMissing,
  focused,
  launchChromium,
  openPage,
  serveStandIn,
  tabThrough,
} from './browser.ts';
import {
  authorizationUrl,
  credentialShop,
  fragmentOf,
  presentationRequest,
  RP_ORIGIN,
  redeem,
  registerVerifier,
  signUpByEmail,
  VERIFIER_ORIGIN,
  VERIFIER_REDIRECT_URI,
} from './flows.ts';

const WALLET = 'button "Connect wallet"';
const EMAIL = 'textbox "E-mail address"';
const SEND = 'button "Send me a code"';
const CODE = 'textbox "Code from the e-mail"';
const LOG_IN = 'button "Log in"';

/** A code that is certainly not this one. */
const wrongCode = (code: string) => code.replace(/^./, (d) => String((Number(d) + 1) % 10));

describe('keyboard only (Tab, Shift+Tab, Enter, Space; never a click)', { skip: chromiumMissing }, () => {
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

  test('e-mail log-in: every control in order, visible focus, a wrong code announced, then back at the RP', async () => {
    const t = await openPage(browser);
    await serveStandIn(t.context, RP_ORIGIN, 'Relying Party');
    const { page, screenshot } = t;
    const start = await authorizationUrl(rp);
    await page.goto(start.url);

    await tabThrough(page, [WALLET, EMAIL, SEND]);
    await tabThrough(page, [EMAIL, WALLET], 'Shift+Tab');
    await tabThrough(page, [EMAIL]);
    await screenshot('keyboard-login-focus-email');
    const email = 'keyboard.login@example.com';
    await page.keyboard.type(email);
    await page.keyboard.press('Enter');

    // The code field appears and takes the focus, visibly.
    await page.getByRole('textbox', { name: 'Code from the e-mail' }).waitFor();
    assert.equal(await focused(page), CODE);
    await assertFocusVisible(page);
    await screenshot('keyboard-login-focus-code');
    const code = await codeFromOutbox(server, email);

    await page.keyboard.type(wrongCode(code));
    t.expectErrorResponse(`${new URL(page.url()).pathname}/login/email/verify`, 400);
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText(/code/i).waitFor();
    assert.equal(await focused(page), CODE, 'the focus stays where the person was');
    await screenshot('keyboard-login-wrong-code');

    // Forward and back through the whole page once the code form is there.
    await tabThrough(page, [LOG_IN]);
    await tabThrough(page, [CODE, SEND, EMAIL, WALLET], 'Shift+Tab');
    await tabThrough(page, [EMAIL, SEND, CODE]);
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(code);
    await tabThrough(page, [LOG_IN]);
    await page.keyboard.press('Space');

    await page.waitForURL(`${REDIRECT_URI}?**`);
    const { claims } = await redeem(rp, start, page.url());
    assert.equal(claims['login_type'], 'email');
    await t.close();
  });

  test('consent: log in by e-mail and share, by keyboard alone', async () => {
    const shop = await credentialShop(server);
    const verifierId = await registerVerifier(server, 'Keyboard Verifier');
    const email = 'keyboard.consent@example.com';
    await shop.store(await signUpByEmail(server, rp, email), { first_name: 'Grace', last_name: 'Hopper' });

    const t = await openPage(browser);
    await serveStandIn(t.context, VERIFIER_ORIGIN, 'Verifier');
    const { page, screenshot } = t;
    const request = presentationRequest(server, verifierId);
    await page.goto(request.url);

    await tabThrough(page, [WALLET, EMAIL]);
    await page.keyboard.type(email);
    await tabThrough(page, [SEND]);
    await page.keyboard.press('Enter');
    await page.getByRole('textbox', { name: 'Code from the e-mail' }).waitFor();
    assert.equal(await focused(page), CODE);
    await page.keyboard.type(await codeFromOutbox(server, email));
    await page.keyboard.press('Enter');

    // Logged in, the page reloads as the consent itself.
    await page.getByRole('button', { name: 'Share' }).waitFor();
    const reached: string[] = [];
    for (const _ of [1, 2, 3]) {
      await page.keyboard.press('Tab');
      reached.push(await focused(page));
      await assertFocusVisible(page);
    }
    assert.match(reached[0]!, /^radio "Person credential from did:key:\S+ — Grace" \[checked\]$/);
    assert.deepEqual(reached.slice(1), ['button "Share"', 'button "Decline"']);
    await tabThrough(page, ['button "Share"'], 'Shift+Tab');
    await screenshot('keyboard-consent-focus-share');
    await page.keyboard.press('Enter');

    await page.waitForURL((url) => url.href.startsWith(`${VERIFIER_REDIRECT_URI}#`));
    const fragment = fragmentOf(page.url());
    assert.equal(fragment.get('state'), request.state);
    const vpToken = JSON.parse(fragment.get('vp_token')!);
    assert.equal(vpToken.person[0].verifiableCredential[0].credentialSubject.first_name, 'Grace');
    await t.close();
  });
});
