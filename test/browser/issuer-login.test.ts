import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { type IssuerWorld, startIssuerWorld } from '../issuer/issuer-helpers.ts';
import { chromiumMissing, launchChromium, openPage, serveStandIn } from './browser.ts';

const WALLET = 'https://wallet.example';
const REDIRECT_URI = `${WALLET}/callback`;

describe("A tenant issuer's log-in page in Chromium (a wallet's authorization request)", {
  skip: chromiumMissing,
}, () => {
  let browser: Browser;
  let world: IssuerWorld;

  before(async () => {
    [browser, world] = await Promise.all([launchChromium(), startIssuerWorld('sqlite')]);
    const put = await world.api('PUT', '/v1/issuer/configurations/member', {
      format: 'dc+sd-jwt',
      vct: 'https://example.edu/member',
      scope: 'member_card',
      claims: [{ path: ['email'] }],
      from_profile: { email: 'email_address' },
    });
    assert.equal(put.status, 201, put.text);
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  test('"Cancel" sends the browser back to the wallet with access_denied and the state', async () => {
    const state = randomBytes(8).toString('hex');
    const pushed = await fetch(`${world.server.url}/v2/openidc/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: WALLET,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'member_card',
        state,
        code_challenge: createHash('sha256')
          .update(randomBytes(32).toString('base64url'))
          .digest('base64url'),
        code_challenge_method: 'S256',
      }),
    });
    assert.equal(pushed.status, 201);
    const { request_uri } = (await pushed.json()) as { request_uri: string };
    const t = await openPage(browser);
    await serveStandIn(t.context, WALLET, 'Wallet');
    const { page } = t;
    await page.goto(
      `${world.server.url}/v2/openidc/authorize?${new URLSearchParams({ client_id: WALLET, request_uri })}`,
    );
    await page.getByRole('heading', { level: 1, name: 'Log in to University' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL(`${REDIRECT_URI}?**`);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('state'), state);
    assert.equal(back.searchParams.get('code'), null);
    await t.close();
  });
});
