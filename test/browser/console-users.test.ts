import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { addAdmin, consoleLogin } from '../console/console-helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  assertNoSidewaysScroll,
  chromiumMissing,
  launchChromium,
  openPage,
  type TestPage,
  tabTo,
} from './browser.ts';

/**
 * The console's users page in Chromium (issue #43): an owner finds a user by e-mail and erases
 * it after confirming, by keyboard alone at 390 px and by mouse at 1280 px; an auditor sees the
 * user but no erase button, and an erase it forges anyway is refused.
 */
for (const kind of DATABASE_KINDS) {
  describe(`the console's users in Chromium, on ${kind}`, { skip: chromiumMissing }, () => {
    let browser: Browser;
    let server: TestServer;
    let tenant: { clientId: number; token: string };

    before(async () => {
      [browser, server] = await Promise.all([launchChromium(), startTestServer(kind)]);
      tenant = await server.createMaster('University of Users');
      await addAdmin(server, tenant.clientId, { email: 'owner@users.example' }, 'owner');
      await addAdmin(server, tenant.clientId, { email: 'auditor@users.example' }, 'auditor');
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    async function createUser(email: string): Promise<number> {
      const created = await server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': tenant.token },
        body: { profile: { email_address: email, first_name: 'Ada', last_name: 'Lovelace' } },
      });
      assert.equal(created.status, 201);
      return created.body.data.user_id;
    }

    /** A page whose browser holds the administrator's console session (logged in headless). */
    async function signedIn(email: string, width: number): Promise<TestPage> {
      const t = await openPage(browser);
      const { cookie } = await consoleLogin(server, email);
      const [name, value] = cookie.split('=') as [string, string];
      await t.context.addCookies([{ name, value, url: server.url, sameSite: 'Strict', httpOnly: true }]);
      await t.page.setViewportSize({ width, height: 900 });
      return t;
    }

    const userExists = async (userId: number) =>
      (await server.database.db
        .selectFrom('users')
        .select('user_id')
        .where('user_id', '=', userId)
        .executeTakeFirst()) !== undefined;

    test('at 390 px by keyboard alone: an owner finds a user by e-mail and erases it after confirming', async () => {
      const email = 'keyboard@people.example';
      const userId = await createUser(email);
      const t = await signedIn('owner@users.example', 390);
      const { page } = t;
      await page.goto(`${server.url}/console/clients/${tenant.clientId}/users`);
      await tabTo(page, 'textbox "E-mail address to find"');
      await page.keyboard.type(email);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.url}/console/clients/${tenant.clientId}/users/${userId}`);
      await page.getByRole('heading', { name: `User ${userId}` }).waitFor();
      await assertNoSidewaysScroll(page, 'the user page');
      await t.screenshot('console-user-390');

      await tabTo(page, 'link "Erase this user…"');
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.url}/console/clients/${tenant.clientId}/users/${userId}/erase`);
      assert.ok(await userExists(userId), 'nothing is erased before the confirmation');
      await assertNoSidewaysScroll(page, 'the confirmation');
      await t.screenshot('console-user-erase-390');
      await tabTo(page, `button "Erase user ${userId}"`);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.url}/console/clients/${tenant.clientId}/users?erased=${userId}`);
      assert.match((await page.getByRole('status').textContent())!, new RegExp(`User ${userId} was erased`));
      assert.equal(await userExists(userId), false);

      // The apps page, with its long URIs and commands, reads on a phone too.
      await tabTo(page, 'link "Apps"');
      await page.keyboard.press('Enter');
      await page.waitForURL(`${server.url}/console/clients/${tenant.clientId}/apps`);
      await page.getByRole('heading', { name: /University of Users/ }).waitFor();
      await assertNoSidewaysScroll(page, 'the apps page');
      await t.screenshot('console-apps-390');
      await t.close();
    });

    test('at 1280 px by mouse: an owner finds a user by e-mail and erases it after confirming', async () => {
      const email = 'mouse@people.example';
      const userId = await createUser(email);
      const t = await signedIn('owner@users.example', 1280);
      const { page } = t;
      await page.goto(`${server.url}/console/clients/${tenant.clientId}`);
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('textbox', { name: 'E-mail address to find' }).click();
      await page.keyboard.type(email);
      await page.getByRole('button', { name: 'Find user' }).click();
      await page.waitForURL(`${server.url}/console/clients/${tenant.clientId}/users/${userId}`);
      await t.screenshot('console-user-1280');
      await page.getByRole('link', { name: 'Erase this user…' }).click();
      await page.getByRole('button', { name: `Erase user ${userId}` }).click();
      await page.waitForURL(`${server.url}/console/clients/${tenant.clientId}/users?erased=${userId}`);
      assert.equal(await userExists(userId), false);
      await t.screenshot('console-users-erased-1280');
      await t.close();
    });

    test('an auditor sees the user but no erase button; a forged erase is refused with 403', async () => {
      const userId = await createUser('kept@people.example');
      const t = await signedIn('auditor@users.example', 1280);
      const { page } = t;
      await page.goto(`${server.url}/console/clients/${tenant.clientId}/users/${userId}`);
      await page.getByRole('heading', { name: `User ${userId}` }).waitFor();
      assert.equal(await page.getByRole('button', { name: /Erase/ }).count(), 0);
      assert.equal(await page.getByRole('link', { name: /Erase/ }).count(), 0);
      // The auditor writes the form the page does not offer, with the page's own token.
      const path = `/console/clients/${tenant.clientId}/users/${userId}/erase`;
      t.expectErrorResponse(path, 403);
      const [response] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === path),
        // The tests' TypeScript has no DOM types, so the page's script is given as text.
        page.evaluate(`(() => {
          const form = document.createElement('form');
          form.method = 'post';
          form.action = ${JSON.stringify(path)};
          for (const [name, value] of [['confirm', 'erase'], ['csrf_token', document.querySelector('input[name="csrf_token"]').value]]) {
            const input = document.createElement('input');
            input.type = 'hidden';
            input.name = name;
            input.value = value;
            form.append(input);
          }
          document.body.append(form);
          form.submit();
        })()`),
      ]);
      assert.equal(response.status(), 403);
      await page.getByRole('heading', { name: 'The console cannot do that' }).waitFor();
      assert.ok(await userExists(userId));
      await t.close();
    });
  });
}
