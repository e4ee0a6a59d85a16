import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { PrivateKeyAccount } from 'viem/accounts';

/**
 * Debian's Chromium driven by playwright-core: the pages are tested in a real browser, with
 * their real Content-Security-Policy, scripts and focus handling. `.ci/run` installs Chromium
 * with apt; without it these tests are skipped with a message saying so.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const chromiumMissing: string | false = existsSync(CHROMIUM_PATH)
  ? false
  : `${CHROMIUM_PATH} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/browser', import.meta.url));

export interface TestPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and warnings, uncaught exceptions and CSP violations, as text. */
  problems: string[];
  /** A full-page screenshot under test-artifacts/browser/. */
  screenshot(name: string): Promise<void>;
  /**
   * Chromium logs every HTTP error answer to a fetch as a console error. A test that provokes
   * one on purpose (a wrong code: 400) names it here, and only that one is not a problem.
   */
  expectErrorResponse(path: string, status: number): void;
  /** Asserts that no page logged an error or warning, threw, or broke the CSP; then closes. */
  close(): Promise<void>;
}

/**
 * A fresh browser context (no cookies, no storage) and page that reaches 127.0.0.1 only. Every
 * console error or warning (Chromium logs CSP refusals there too), every uncaught exception and
 * every `securitypolicyviolation` event is collected, so that `close()` can assert there were none.
 */
export async function openPage(
  browser: Browser,
  options: { trustTestTls?: boolean } = {},
): Promise<TestPage> {
  // trustTestTls: the server is behind a test TLS front (test/verifier/tls-front.ts) whose CA
  // Chromium does not know, as wallets need https:// request and response URIs.
  const context = await browser.newContext({
    viewport: { width: 800, height: 900 },
    ...(options.trustTestTls ? { ignoreHTTPSErrors: true } : {}),
  });
  const problems: string[] = [];
  const expected: Array<{ path: string; status: number }> = [];
  await context.exposeFunction('__reportCspViolation', (text: string) => {
    problems.push(`CSP violation: ${text}`);
  });
  // Init scripts run before the page's own and are not subject to its CSP.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', function (event) {
  window.__reportCspViolation(event.violatedDirective + ' blocked ' + event.blockedURI + ' on ' + event.documentURI);
});`,
  });
  // Only the server under test is reached; the stand-ins (serveStandIn) are routed later, and
  // so take precedence over this catch-all.
  await context.route('**', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.fallback();
    problems.push(`request to somewhere else: ${url.href}`);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      const where = message.location().url || page.url();
      const failed = /^Failed to load resource: the server responded with a status of (\d+)/.exec(
        message.text(),
      );
      const pathname = URL.canParse(where) ? new URL(where).pathname : where;
      const allowed = expected.findIndex(
        (e) => failed && e.path === pathname && e.status === Number(failed[1]),
      );
      if (allowed >= 0) {
        expected.splice(allowed, 1);
        return;
      }
      problems.push(`console ${message.type()} at ${where}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`uncaught on ${page.url()}: ${error.message}`));
  return {
    context,
    page,
    problems,
    async screenshot(name) {
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
    },
    expectErrorResponse(path, status) {
      expected.push({ path, status });
    },
    async close() {
      await context.close();
      assert.deepEqual(problems, [], 'no console errors, uncaught exceptions or CSP violations');
    },
  };
}

/**
 * Stands in for a relying party or verifier at `origin` (which the browser never reaches):
 * a small page, so that the test can read where Coffer sent the browser.
 */
export async function serveStandIn(context: BrowserContext, origin: string, title: string): Promise<void> {
  await context.route(`${origin}/**`, (route) =>
    route.fulfill({
      status: 200,
      contentType: 'text/html; charset=utf-8',
      body: `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>Coffer sent the browser back here.</p></main></body></html>`,
    }),
  );
}

export interface TestWallet {
  /** Every EIP-4361 message the page asked the wallet to sign, as text. */
  signed: string[];
}

/**
 * An EIP-1193 provider at `window.ethereum`, as a wallet extension injects it. Signing happens
 * in Node with the viem account (a real EIP-191 `personal_sign` over the bytes the page built).
 * Like real wallets it reports the address in lower case, so the page must checksum it itself.
 * With `decline`, the wallet refuses to sign (EIP-1193 error 4001), as when the person says no.
 */
export async function injectWallet(
  context: BrowserContext,
  account: PrivateKeyAccount,
  options: { chainId?: number; decline?: boolean } = {},
): Promise<TestWallet> {
  const wallet: TestWallet = { signed: [] };
  await context.exposeFunction('__testWalletSign', async (messageHex: string, address: string) => {
    assert.equal(address.toLowerCase(), account.address.toLowerCase(), 'the page asks the chosen account');
    wallet.signed.push(Buffer.from(messageHex.slice(2), 'hex').toString('utf8'));
    return account.signMessage({ message: { raw: messageHex as `0x${string}` } });
  });
  await context.addInitScript({
    content: `window.ethereum = {
  isTestWallet: true,
  request: async function (args) {
    switch (args.method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [${JSON.stringify(account.address.toLowerCase())}];
      case 'eth_chainId':
        return ${JSON.stringify(`0x${(options.chainId ?? 1).toString(16)}`)};
      case 'personal_sign':
        if (${JSON.stringify(options.decline === true)}) {
          throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
        }
        return window.__testWalletSign(args.params[0], args.params[1]);
      default:
        throw Object.assign(new Error('Unsupported method ' + args.method), { code: 4200 });
    }
  },
};`,
  });
  return wallet;
}

/** What has the keyboard focus: its role and accessible name, e.g. `button "Share"`. */
export async function focused(page: Page): Promise<string> {
  const focus = page.locator(':focus');
  if ((await focus.count()) === 0) return '(nothing: the document body)';
  // The first line of the ARIA snapshot, without a text field's value: `- textbox "Code": "123"`.
  const line = (await focus.ariaSnapshot()).split('\n')[0]!;
  return /^- (\w+(?: "(?:[^"\\]|\\.)*")?(?: \[[^\]]*\])*)/.exec(line)?.[1] ?? line;
}

/**
 * Asserts that the focused element shows it: it matches :focus-visible and draws an outline
 * of at least 2 CSS pixels (the pages' `:focus-visible` style).
 */
export async function assertFocusVisible(page: Page): Promise<void> {
  const focus = page.locator(':focus');
  assert.equal(await focus.count(), 1, 'something has the focus');
  const style = await focus.evaluate((element) => {
    const computed = element.ownerDocument.defaultView.getComputedStyle(element);
    return {
      focusVisible: element.matches(':focus-visible') as boolean,
      outlineStyle: computed.outlineStyle as string,
      outlineWidth: Number.parseFloat(computed.outlineWidth),
    };
  });
  const name = await focused(page);
  assert.ok(style.focusVisible, `${name} matches :focus-visible`);
  assert.notEqual(style.outlineStyle, 'none', `${name} has a focus outline`);
  assert.ok(style.outlineWidth >= 2, `${name}'s focus outline is at least 2px (${style.outlineWidth}px)`);
}

/**
 * Presses Tab (or Shift+Tab) once per expected stop and checks each stop and that its focus
 * is visible: the order the keyboard reaches the page's controls.
 */
export async function tabThrough(page: Page, expected: string[], key = 'Tab'): Promise<void> {
  const reached: string[] = [];
  for (let i = 0; i < expected.length; i++) {
    await page.keyboard.press(key);
    reached.push(await focused(page));
    await assertFocusVisible(page);
  }
  assert.deepEqual(reached, expected, `${key} order`);
}

/** Presses Tab until `name` has the focus (at most `limit` times), checking each stop shows it. */
export async function tabTo(page: Page, name: string | RegExp, limit = 60): Promise<void> {
  const reached: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    reached.push(now);
    if (now.startsWith('(nothing')) break;
    await assertFocusVisible(page);
    if (typeof name === 'string' ? now === name : name.test(now)) return;
  }
  assert.fail(`${name} was not reached with Tab; reached ${reached.join(', ')}`);
}

/** A page that fits the screen's width: nothing to scroll sideways to on a phone. */
export async function assertNoSidewaysScroll(page: Page, what: string): Promise<void> {
  const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
  assert.ok((overflow as number) <= 0, `${what}: the page is ${overflow}px wider than the screen`);
}
