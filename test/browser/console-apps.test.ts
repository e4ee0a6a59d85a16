import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { findClient } from '../../src/clients/client-repository.ts';
import { addAdmin, SUB_CLIENT_FIELDS } from '../console/console-helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { codeFromOutbox } from '../oidc/flow-helpers.ts';
import { assertNoSidewaysScroll, chromiumMissing, launchChromium, openPage, tabTo } from './browser.ts';

/**
 * Issue #43: an owner creates a sub-client and an app in Chromium, by keyboard alone at 390 px
 * and by mouse at 1280 px; the app's secret is shown once, and the app is then on the apps page.
 */
for (const kind of DATABASE_KINDS) {
  describe(`the console's apps in Chromium on ${kind}`, { skip: chromiumMissing }, () => {
    let browser: Browser;
    let server: TestServer;
    let clientId: number;

    before(async () => {
      [browser, server] = await Promise.all([launchChromium(), startTestServer(kind)]);
      clientId = (await server.createMaster('University of Apps')).clientId;
      await addAdmin(server, clientId, { email: 'owner@apps.example' }, 'owner');
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    for (const [width, keyboard] of [
      [390, true],
      [1280, false],
    ] as const) {
      test(`at ${width} px by ${keyboard ? 'keyboard' : 'mouse'}: an owner creates a sub-client and an app`, async () => {
        const t = await openPage(browser);
        const { page } = t;
        const url = server.url;
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
        /** A radio button of a group: by keyboard, Tab reaches the checked one and arrows move. */
        const choose = async (checked: string, wanted: string) => {
          if (keyboard) {
            // A name with a colon comes quoted in the ARIA snapshot: match it anywhere in the line.
            await tabTo(page, new RegExp(`radio "${checked}`));
            await page.keyboard.press('ArrowDown');
          } else await page.getByRole('radio', { name: wanted }).check();
          assert.ok(await page.getByRole('radio', { name: wanted }).isChecked(), wanted);
        };

        const email = 'owner@apps.example';
        await page.goto(`${url}/console`);
        await fill('E-mail address', email);
        await go('Send me a code', 'button');
        const code = page.getByRole('textbox', { name: 'Code from the e-mail' });
        await code.waitFor();
        if (keyboard) {
          await page.keyboard.type(await codeFromOutbox(server, email));
          await page.keyboard.press('Enter');
        } else {
          await code.fill(await codeFromOutbox(server, email));
          await page.getByRole('button', { name: 'Log in' }).click();
        }
        await page.waitForURL(`${url}/console/clients/${clientId}`);

        // The sub-client first, as a master's tenant is set up.
        await go('Sub-clients');
        await page.waitForURL(`${url}/console/clients/${clientId}/subclients`);
        const faculty = `Faculty ${width}`;
        const values = { ...SUB_CLIENT_FIELDS, name: faculty, subdomain: `apps${width}` };
        for (const [field, label] of [
          ['name', 'Name'],
          ['address_1', 'Address'],
          ['city', 'City'],
          ['province', 'Province or region'],
          ['country', 'Country'],
          ['timezone', 'Time zone'],
          ['domain', 'Domain of the app'],
          ['subdomain', 'Subdomain'],
        ] as Array<[keyof typeof values, string]>)
          await fill(label, values[field]);
        await go('Create sub-client', 'button');
        await page.waitForURL(/\/subclients\?created=\d+$/);
        assert.match((await page.getByRole('status').textContent())!, /Sub-client \d+ was created/);

        // Then an app, on the apps page.
        await go('Apps');
        await page.waitForURL(`${url}/console/clients/${clientId}/apps`);
        await page.getByRole('heading', { name: 'New app' }).waitFor();
        const name = `Library app ${width}`;
        await fill('Name', name);
        await fill('Redirect URIs', `https://library${width}.example/cb`);
        await fill('Post-logout redirect URIs', `https://library${width}.example/bye`);
        await choose('No: people log in again', 'Yes: the app may use the refresh_token grant');
        await assertNoSidewaysScroll(page, 'the apps page with its forms');
        await t.screenshot(`console-apps-new-${width}`);
        await go('Create app', 'button');

        await page.getByRole('heading', { name: 'App created' }).waitFor();
        const created = (await page.getByRole('status').textContent())!;
        const appId = Number(created.match(/App (\d+) was created/)?.[1]);
        const secret = (await page.locator('#client-secret').textContent())!;
        assert.match(secret, /\S{20,}/);
        assert.match((await page.getByRole('alert').textContent())!, /shown only this once/);
        await assertNoSidewaysScroll(page, 'the new secret');
        await t.screenshot(`console-apps-secret-${width}`);
        const row = await findClient(server.database.db, appId);
        assert.equal(row?.parent_id, clientId);
        assert.deepEqual(JSON.parse(row!.grant_types), ['authorization_code', 'refresh_token']);

        await go('Back to the apps');
        await page.waitForURL(`${url}/console/clients/${clientId}/apps`);
        await page.getByRole('heading', { name: new RegExp(name) }).waitFor();
        await page.getByRole('heading', { name: new RegExp(faculty) }).waitFor();
        assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again');
        await t.close();
      });
    }
  });
}
