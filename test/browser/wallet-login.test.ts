import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { createClient } from '../../src/clients/client-admin.ts';
import { coffer } from '../helpers/cli.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { REDIRECT_URI } from '../oidc/flow-helpers.ts';
import { answer, resolveRequest } from '../verifier/test-wallet.ts';
import {
  presentSdJwt,
  sdJwtQuery,
  startVerifierWorld,
  type VerifierWorld,
} from '../verifier/verifier-helpers.ts';
import { chromiumMissing, focused, launchChromium, openPage, serveStandIn } from './browser.ts';
import { RP_ORIGIN } from './flows.ts';

/**
 * The log-in page's third method in Chromium: "Use a digital wallet" appears only for a client
 * configured with --wallet-login; its button (by keyboard) shows the QR code and the "Open your
 * wallet" link, and once a wallet (not Coffer's code) answers, the page goes on by itself.
 */
describe('logging in with a wallet in Chromium', { skip: chromiumMissing }, () => {
  let browser: Browser;
  let world: VerifierWorld;
  let dir: string;
  let config: oidc.Configuration;
  let plainClientId: number;

  before(async () => {
    [browser, world] = await Promise.all([launchChromium(), startVerifierWorld('sqlite')]);
    dir = await mkdtemp(path.join(tmpdir(), 'coffer-wallet-login-page-'));
    const file = path.join(dir, 'wallet-login.json');
    await writeFile(
      file,
      JSON.stringify({
        dcql_query: sdJwtQuery(PID_VCT, [['email'], ['given_name']]),
        account_claim: ['email'],
      }),
    );
    const id = String(world.clientId);
    const set = await coffer(
      world.server,
      'client',
      'set',
      id,
      '--redirect-uri',
      REDIRECT_URI,
      '--wallet-login',
      file,
    );
    assert.equal(set.code, 0, set.stderr);
    const secret = JSON.parse((await coffer(world.server, 'client', 'secret-rotate', id, '--json')).stdout)
      .client_secret as string;
    config = await oidc.discovery(new URL(world.front.url), id, secret, undefined, {
      [oidc.customFetch]: world.front.fetch as never,
    });
    config[oidc.customFetch] = world.front.fetch as never;
    const plain = await createClient(world.server.database.db, {
      name: 'Plain App',
      redirectUris: [REDIRECT_URI],
    });
    plainClientId = plain.client_id;
  });
  after(async () => {
    await browser?.close();
    await world?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function authorizationUrl(clientId = world.clientId) {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    const url = new URL('/v2/openidc/authorize', world.front.url);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: String(clientId),
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    }).toString();
    return { url: url.href, verifier, nonce, state };
  }

  test('only a client with --wallet-login shows the method', async () => {
    const t = await openPage(browser, { trustTestTls: true });
    await t.page.goto((await authorizationUrl(plainClientId)).url);
    await t.page.getByRole('heading', { level: 1, name: 'Log in to Plain App' }).waitFor();
    assert.equal(await t.page.getByRole('heading', { name: 'Use a digital wallet' }).count(), 0);
    await t.close();
  });

  test('by keyboard: the button shows the QR code and the link; the wallet answers; the page goes back to the app', async () => {
    const t = await openPage(browser, { trustTestTls: true });
    await serveStandIn(t.context, RP_ORIGIN, 'Relying Party');
    const { page } = t;
    const start = await authorizationUrl();
    await page.goto(start.url);
    await page.getByRole('heading', { level: 2, name: 'Use a digital wallet' }).waitFor();
    const qr = page.getByRole('img', { name: /QR code of the request/ });
    assert.equal(await qr.count(), 0, 'no code before the person asks for one');
    await t.screenshot('wallet-login-page');

    const button = page.getByRole('button', { name: 'Use a digital wallet' });
    await button.focus();
    await page.keyboard.press('Enter');
    await qr.waitFor();
    const link = page.getByRole('link', { name: 'Open your wallet' });
    const request = (await link.getAttribute('href'))!;
    assert.match(request, /^openid4vp:\/\/\?client_id=x509_san_dns/);
    assert.equal(
      await page.getByRole('status').textContent(),
      'Scan the code with the wallet on your phone, or open your wallet on this device.',
    );
    assert.equal(await focused(page), 'button "Use a digital wallet"', 'the focus stays where it was');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'link "Open your wallet"');
    await t.screenshot('wallet-login-qr');
    // Phone sized: the code fits in a 320 px wide screen without scrolling sideways.
    await page.setViewportSize({ width: 320, height: 640 });
    const widths = await page
      .locator('html')
      .evaluate((html) => ({ scroll: html.scrollWidth as number, client: html.clientWidth as number }));
    assert.ok(widths.scroll <= widths.client, `${widths.scroll}px of content in ${widths.client}px`);
    await t.screenshot('wallet-login-qr-phone');
    await page.setViewportSize({ width: 800, height: 900 });

    // A phone wallet scans the code and shares the credential.
    const holder = await generateKeyPair('ES256', { extractable: true });
    const credential = await issueSdJwtVc(world.issuer, {
      holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
    });
    const resolved = await resolveRequest(request);
    await page
      .getByRole('status')
      .getByText('Your wallet has the request. Choose what to share there.')
      .waitFor();
    const presentation = await presentSdJwt(credential, { email: true, given_name: true }, holder, {
      aud: resolved.clientId,
      nonce: resolved.payload.nonce,
    });
    assert.equal((await answer(resolved, { pid: [presentation] })).status, 200);

    await page.waitForURL(`${REDIRECT_URI}?**`);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
      pkceCodeVerifier: start.verifier,
      expectedNonce: start.nonce,
      expectedState: start.state,
    });
    const claims = tokens.claims()!;
    assert.equal(claims['login_type'], 'credential');
    assert.equal(claims['email'], 'ada@example.com');
    assert.equal(claims['given_name'], 'Ada');
    await t.screenshot('wallet-login-back-at-rp');
    await t.close();
  });
});
