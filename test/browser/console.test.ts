import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { addAdmin, SUB_CLIENT_FIELDS } from '../console/console-helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { codeFromOutbox } from '../oidc/flow-helpers.ts';
import {
  assertNoSidewaysScroll,
  chromiumMissing,
  focused,
  launchChromium,
  openPage,
  tabThrough,
  tabTo,
} from './browser.ts';

/**
 * The console in Chromium (issue #43), by keyboard alone at a phone's and a desktop's width: an
 * owner logs in with an e-mail code, creates a sub-client and finds the act in the audit trail.
 */
for (const kind of DATABASE_KINDS) {
  describe(`the console in Chromium, keyboard only, on ${kind}`, { skip: chromiumMissing }, () => {
    let browser: Browser;
    let server: TestServer;
    let clientId: number;
    let adminId: number;

    before(async () => {
      [browser, server] = await Promise.all([launchChromium(), startTestServer(kind)]);
      clientId = (await server.createMaster('University of Keyboards')).clientId;
      adminId = await addAdmin(server, clientId, { email: 'owner@keyboards.example' }, 'owner');
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    for (const width of [390, 1280]) {
      test(`at ${width} px: log in with a code, create a sub-client, see it in the audit trail`, async () => {
        const t = await openPage(browser);
        const { page } = t;
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${server.url}/console`);
        assert.match(new URL(page.url()).pathname, /^\/interaction\//);

        await tabTo(page, 'textbox "E-mail address"');
        const email = 'owner@keyboards.example';
        await page.keyboard.type(email);
        await page.keyboard.press('Enter');
        await page.getByRole('textbox', { name: 'Code from the e-mail' }).waitFor();
        assert.equal(await focused(page), 'textbox "Code from the e-mail"');
        await page.keyboard.type(await codeFromOutbox(server, email));
        await page.keyboard.press('Enter');

        await page.waitForURL(`${server.url}/console/clients/${clientId}`);
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        await assertNoSidewaysScroll(page, 'the overview');
        await t.screenshot(`console-overview-${width}`);

        await tabTo(page, 'link "Sub-clients"');
        await page.keyboard.press('Enter');
        await page.waitForURL(`${server.url}/console/clients/${clientId}/subclients`);
        await tabTo(page, 'textbox "Name"');
        const subdomain = `kb${width}`;
        const values = { ...SUB_CLIENT_FIELDS, name: `Keyboard faculty ${width}`, subdomain };
        const order: Array<[keyof typeof values, string]> = [
          ['name', 'Name'],
          ['address_1', 'Address'],
          ['address_2', 'Address, second line (optional)'],
          ['city', 'City'],
          ['province', 'Province or region'],
          ['country', 'Country'],
          ['timezone', 'Time zone'],
          ['domain', 'Domain of the app'],
          ['subdomain', 'Subdomain'],
        ];
        for (const [index, [field, label]] of order.entries()) {
          if (index > 0) await tabThrough(page, [`textbox "${label}"`]);
          await page.keyboard.type(values[field]);
        }
        await assertNoSidewaysScroll(page, 'the sub-client form');
        await t.screenshot(`console-subclient-form-${width}`);
        await tabThrough(page, ['button "Create sub-client"']);
        await page.keyboard.press('Enter');

        await page.waitForURL(/\/subclients\?created=\d+$/);
        const notice = page.getByRole('status');
        assert.match((await notice.textContent())!, /Sub-client \d+ was created/);
        await page.getByRole('cell', { name: values.name }).waitFor();
        await t.screenshot(`console-subclient-created-${width}`);

        await tabTo(page, 'link "Audit trail"');
        await page.keyboard.press('Enter');
        await page.waitForURL(`${server.url}/console/clients/${clientId}/audit`);
        const firstRow = page.locator('tbody tr').first();
        assert.match((await firstRow.textContent())!, /subclient\.create/);
        assert.match((await firstRow.textContent())!, new RegExp(`admin:${adminId}`));
        await assertNoSidewaysScroll(page, 'the audit trail');
        await t.screenshot(`console-audit-${width}`);
        await t.close();
      });
    }
  });
}
