import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import type { Browser } from 'playwright-core';
import { addAdmin } from '../console/console-helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type InteropIssuer, startInteropIssuer } from '../issuer/test-wallet.ts';
import { codeFromOutbox } from '../oidc/flow-helpers.ts';
import { assertNoSidewaysScroll, chromiumMissing, launchChromium, openPage, tabTo } from './browser.ts';

/** The claims a wallet reads from an SD-JWT VC: its disclosures, as name → value. */
const disclosedClaims = (sdJwt: string) =>
  Object.fromEntries(
    sdJwt
      .split('~')
      .slice(1)
      .filter(Boolean)
      .map((d) => JSON.parse(Buffer.from(d, 'base64url').toString()) as [string, string, unknown])
      .map(([, name, value]) => [name, value]),
  );

/**
 * The console's issuer pages in Chromium (issue #43): an owner writes a configuration, makes an
 * offer, a wallet takes it from the offer's link, the owner revokes the credential and the
 * status list says so. By keyboard alone at 390 px, by mouse at 1280 px. The wallet is the test
 * wallet (other people's OpenID4VCI client), so it reaches Coffer through a TLS front as a
 * wallet must; the browser goes through the same front.
 */
for (const kind of DATABASE_KINDS) {
  describe(`the console's issuer pages in Chromium on ${kind}`, { skip: chromiumMissing }, () => {
    let browser: Browser;
    let world: InteropIssuer;

    before(async () => {
      [browser, world] = await Promise.all([launchChromium(), startInteropIssuer(kind)]);
      await addAdmin(world.server, world.clientId, { email: 'owner@issuer.example' }, 'owner');
    });
    after(async () => {
      await browser?.close();
      await world?.close();
    });

    for (const [width, keyboard] of [
      [390, true],
      [1280, false],
    ] as const) {
      test(`at ${width} px by ${keyboard ? 'keyboard' : 'mouse'}: configuration, offer, issuance, revocation`, async () => {
        const t = await openPage(browser, { trustTestTls: true });
        const { page } = t;
        const url = world.front.url;
        const base = `${url}/console/clients/${world.clientId}/issuer`;
        const id = `diploma-${width}`;
        await page.setViewportSize({ width, height: 900 });
        const go = async (name: string | RegExp, role: 'link' | 'button' = 'link') => {
          if (keyboard) {
            await tabTo(page, typeof name === 'string' ? `${role} "${name}"` : name);
            await page.keyboard.press('Enter');
          } else await page.getByRole(role, { name }).click();
        };
        const fill = async (label: string, value: string) => {
          if (keyboard) {
            await tabTo(page, new RegExp(`^textbox "${label}"`));
            await page.keyboard.type(value);
          } else await page.getByRole('textbox', { name: label, exact: true }).fill(value);
        };

        const email = 'owner@issuer.example';
        await page.goto(`${url}/console`);
        await fill('E-mail address', email);
        await go('Send me a code', 'button');
        await page.getByRole('textbox', { name: 'Code from the e-mail' }).waitFor();
        if (keyboard) await page.keyboard.type(await codeFromOutbox(world.server, email));
        else
          await page
            .getByRole('textbox', { name: 'Code from the e-mail' })
            .fill(await codeFromOutbox(world.server, email));
        if (keyboard) await page.keyboard.press('Enter');
        else await page.getByRole('button', { name: 'Log in' }).click();
        await page.waitForURL(`${url}/console/clients/${world.clientId}`);

        await go('Issuer');
        await page.waitForURL(base);
        await go('Write a new configuration');
        await page.waitForURL(`${base}/configurations/new`);
        await fill('Id', id);
        await fill('Type', 'https://credentials.example.com/diploma');
        await fill('Claims', 'given_name | Given name\ndegree | Degree');
        if (keyboard) {
          await tabTo(page, /^checkbox "Status list/);
          await page.keyboard.press('Space');
        } else await page.getByRole('checkbox', { name: /Status list/ }).check();
        await assertNoSidewaysScroll(page, 'the configuration form');
        await t.screenshot(`console-issuer-configuration-${width}`);
        await go('Save configuration', 'button');
        await page.waitForURL(`${base}/configurations/${id}?done=saved`);
        assert.match((await page.getByRole('status').textContent())!, /The configuration was saved/);

        await go('Configurations');
        await page.waitForURL(base);
        await go(`Offer ${id}`);
        await page.waitForURL(`${base}/offers/new?configuration=${id}`);
        await fill('Given name', 'Ada');
        await fill('Degree', 'Mathematics');
        await go('Make the offer', 'button');
        await page.getByRole('heading', { name: 'Offer made' }).waitFor();
        await page.getByRole('img', { name: /QR code of the offer/ }).waitFor();
        await assertNoSidewaysScroll(page, 'the offer');
        await t.screenshot(`console-issuer-offer-${width}`);

        // The wallet takes the offer from the page's link, as a wallet scanning the QR code would:
        // it resolves the credential_offer_uri, redeems the pre-authorized code, proves a key.
        const link = (await page.getByRole('link', { name: 'The offer link' }).getAttribute('href'))!;
        assert.ok(new URL(link).searchParams.get('credential_offer_uri'), link);
        const received = await world.wallet.receive(link);
        assert.equal(received.configurationId, id);
        assert.equal(received.credentials.length, 1);
        assert.deepEqual(disclosedClaims(received.credentials[0] as string), {
          given_name: 'Ada',
          degree: 'Mathematics',
        });

        await go('Issued credentials');
        await page.waitForURL(`${base}/credentials`);
        const issued = (await world.api('GET', '/v1/issuer/credentials')).body.data.find(
          (c: { configuration_id: string }) => c.configuration_id === id,
        );
        await go(`Revoke ${issued.id}`, 'button');
        await page.waitForURL(`${base}/credentials?changed=1`);
        assert.match((await page.getByRole('status').textContent())!, /The status was changed/);
        await assertNoSidewaysScroll(page, 'the issued credentials');
        await t.screenshot(`console-issuer-credentials-${width}`);

        const list = await world.front.fetch(issued.status_list.uri);
        assert.equal(list.status, 200);
        assert.equal(
          getListFromStatusListJWT(await list.text()).getStatus(issued.status_list.index),
          1,
          'revoked',
        );
        await t.close();
      });
    }
  });
}
