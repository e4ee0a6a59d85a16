import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { getAddress, keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import {
  LOGIN_PAGE_SCRIPT,
  type LoginPageInput,
  renderLoginPage,
  SIWE_MESSAGE_JS,
} from '../../src/interaction/login-page.ts';
import { escapeHtml, pageCsp, renderErrorPage } from '../../src/interaction/page-chrome.ts';
import { buildSiweChallenge, newSiweNonce, verifySiweLogin } from '../../src/interaction/siwe.ts';

const ALICE = privateKeyToAccount('0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318');

function challenge(now = new Date()) {
  return buildSiweChallenge({
    domain: 'coffer.example',
    uri: 'https://coffer.example/interaction/int-1',
    chainId: 1,
    nonce: newSiweNonce(),
    issuedAt: now,
    expirationTime: new Date(now.getTime() + 10 * 60_000),
    statement: 'Log in to Example Shop with your Ethereum account.',
  });
}

function input(overrides: Partial<LoginPageInput> = {}): LoginPageInput {
  return {
    tenantName: 'Example Shop',
    interactionId: 'int-1',
    siwe: challenge(),
    csrfToken: 'csrf-token-1',
    cspNonce: 'bm9uY2Ux',
    ...overrides,
  };
}

type SiweJs = {
  keccak256Hex(bytes: Uint8Array): string;
  toChecksumAddress(address: string): string;
  buildSiweMessage(fields: Record<string, unknown>): string;
};
const siweJs = new Function(
  `${SIWE_MESSAGE_JS}\nreturn { keccak256Hex, toChecksumAddress, buildSiweMessage };`,
)() as SiweJs;

test('escapeHtml makes the five special characters inert', () => {
  assert.equal(
    escapeHtml(`<a href="x" title='y'>&amp;</a>`),
    '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
  );
  assert.equal(escapeHtml('Plain text, 100 %'), 'Plain text, 100 %');
});

test("the page's Keccak-256 equals viem's at every padding boundary", () => {
  for (const length of [0, 1, 31, 32, 40, 134, 135, 136, 137, 271, 272, 273, 1000]) {
    const bytes = randomBytes(length);
    assert.equal(`0x${siweJs.keccak256Hex(bytes)}`, keccak256(bytes), `length ${length}`);
  }
});

test("the page's EIP-55 checksum equals viem's getAddress", () => {
  for (let i = 0; i < 200; i++) {
    const address = `0x${randomBytes(20).toString('hex')}`;
    assert.equal(siweJs.toChecksumAddress(address), getAddress(address));
    assert.equal(siweJs.toChecksumAddress(`0x${address.slice(2).toUpperCase()}`), getAddress(address));
  }
  assert.throws(() => siweJs.toChecksumAddress('0x1234'), /not valid/);
});

test("the page's SIWE message equals the server's createSiweMessage for the same fields", () => {
  for (const statement of ['Log in to Example Shop with your Ethereum account.', '']) {
    const siwe = { ...challenge(), statement };
    const address = `0x${randomBytes(20).toString('hex')}`;
    const fromPage = siweJs.buildSiweMessage({
      domain: siwe.domain,
      address,
      statement: siwe.statement,
      uri: siwe.uri,
      chainId: 10,
      nonce: siwe.nonce,
      issuedAt: siwe.issued_at,
      expirationTime: siwe.expiration_time,
    });
    const fromServer = createSiweMessage({
      domain: siwe.domain,
      address: address as `0x${string}`,
      statement: siwe.statement,
      uri: siwe.uri,
      version: '1',
      chainId: 10,
      nonce: siwe.nonce,
      issuedAt: new Date(siwe.issued_at),
      expirationTime: new Date(siwe.expiration_time),
    });
    assert.equal(fromPage, fromServer);
  }
});

test('the page is accessible: language, main, heading with the tenant, alert region, focus style', () => {
  const html = renderLoginPage(input());
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assert.match(html, /<main>[\s\S]*<\/main>/);
  assert.match(html, /<h1>Log in to Example Shop<\/h1>/);
  assert.match(html, /<div id="login-error" class="error" role="alert" aria-live="assertive"><\/div>/);
  assert.match(html, /role="status" aria-live="polite"/);
  assert.match(html, /:focus-visible \{ outline: 3px solid/);
  assert.doesNotMatch(html, /:empty\s*\{[^}]*display: none/);
});

test('every input has a label', () => {
  const html = renderLoginPage(input());
  const inputIds = [...html.matchAll(/<input\b[^>]*\bid="([^"]+)"/g)].map((m) => m[1]);
  assert.equal(inputIds.length, [...html.matchAll(/<input\b/g)].length, 'every input has an id');
  assert.deepEqual(inputIds, ['email', 'code']);
  for (const id of inputIds) assert.match(html, new RegExp(`<label for="${id}">[^<]+</label>`));
});

test('the CSP nonce is on every script and style element, and the policy allows nothing else', () => {
  const html = renderLoginPage(input());
  const tags = [...html.matchAll(/<(script|style)\b[^>]*>/g)].map((m) => m[0]);
  assert.equal(tags.length, 3);
  for (const tag of tags) assert.match(tag, /\bnonce="bm9uY2Ux"/);
  const csp = pageCsp('bm9uY2Ux');
  assert.match(csp, /script-src 'nonce-bm9uY2Ux'/);
  assert.match(csp, /style-src 'nonce-bm9uY2Ux'/);
  assert.doesNotMatch(csp, /unsafe|\*/);
});

test('no third-party assets: nothing is loaded from anywhere', () => {
  const html = renderLoginPage(input());
  assert.doesNotMatch(html, /\bsrc=|<link\b|<img\b|<iframe\b|@import|url\(/);
});

test('hostile strings are inert: tenant name, interaction id, token, error and links', () => {
  const evil = `</script><script>alert(1)</script><!--"'&`;
  const html = renderLoginPage(
    input({
      tenantName: evil,
      interactionId: evil,
      csrfToken: evil,
      cspNonce: 'n"><script>alert(2)</script>',
      error: evil,
      privacyLink: 'javascript:alert(3)',
    }),
  );
  assert.equal([...html.matchAll(/<script\b/g)].length, 2, 'no extra script element');
  assert.doesNotMatch(html, /alert\(1\)<\/script>|<!--|alert\(3\)/);
  assert.match(
    html,
    /<h1>Log in to &lt;\/script&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;&lt;!--&quot;&#39;&amp;<\/h1>/,
  );
  assert.match(html, /<title>Log in – &lt;\/script&gt;/);
  assert.match(html, /role="alert" aria-live="assertive">&lt;\/script&gt;/);
  assert.doesNotMatch(html, /<footer>/, 'a javascript: privacy link is dropped');
  const json = /<script type="application\/json" id="login-data"[^>]*>([^<]*)<\/script>/.exec(html)?.[1];
  assert.ok(json, 'the data block holds no "<"');
  assert.deepEqual(JSON.parse(json).interactionId, evil);
});

test('an https privacy link is shown', () => {
  const html = renderLoginPage(input({ privacyLink: 'https://shop.example/privacy?a=1&b=2' }));
  assert.match(html, /<footer><a href="https:\/\/shop\.example\/privacy\?a=1&amp;b=2">/);
});

test('the methods offered can be narrowed', () => {
  const emailOnly = renderLoginPage(input({ methods: ['email'] }));
  assert.doesNotMatch(emailOnly, /id="wallet-button"/);
  assert.match(emailOnly, /id="email-form"/);
  const walletOnly = renderLoginPage(input({ methods: ['wallet'] }));
  assert.doesNotMatch(walletOnly, /<input\b/);
  assert.match(walletOnly, /id="wallet-button"/);
});

test('the error page escapes and is accessible', () => {
  const html = renderErrorPage({ title: 'Unknown app', message: 'Client <b>7</b> is not registered.' });
  assert.match(html, /<html lang="en">/);
  assert.match(
    html,
    /<main>\n<h1>Unknown app<\/h1>\n<p role="alert">Client &lt;b&gt;7&lt;\/b&gt; is not registered\.<\/p>/,
  );
  assert.doesNotMatch(html, /<script|<style/);
  assert.match(renderErrorPage({ title: 't', message: 'm', cspNonce: 'abc' }), /<style nonce="abc">/);
});

/*
 * Running the page's own script. The browser is replaced by a small stand-in document built
 * from the rendered HTML's element ids (so a script that looks for an element the page lacks
 * fails here), a fetch that plays the server, and an EIP-1193 provider backed by a real viem
 * account. Signatures are real and verified by the server's verifySiweLogin.
 */

interface FakeElement {
  id: string;
  textContent: string;
  value: string;
  hidden: boolean;
  attributes: Map<string, string>;
  listeners: Map<string, (event: unknown) => void>;
  focused: boolean;
  addEventListener(type: string, listener: (event: unknown) => void): void;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  focus(): void;
}

interface PageRun {
  elements: Map<string, FakeElement>;
  requests: Array<{ url: string; headers: Record<string, string>; body: unknown }>;
  navigations: string[];
  reloads: number;
  until(condition: () => boolean): Promise<void>;
  click(id: string): void;
  submit(id: string): { prevented: boolean };
}

type Answer = { status: number; body?: unknown };

function runPage(
  html: string,
  options: { ethereum?: unknown; answer(url: string, body: unknown): Answer | Promise<Answer> },
) {
  const elements = new Map<string, FakeElement>();
  for (const match of html.matchAll(/<(\w+)\b([^>]*)\bid="([^"]+)"([^>]*)>/g)) {
    const id = match[3]!;
    elements.set(id, {
      id,
      textContent: '',
      value: '',
      hidden: /\shidden\b/.test(`${match[2]} ${match[4]}`),
      attributes: new Map(),
      listeners: new Map(),
      focused: false,
      addEventListener(type, listener) {
        this.listeners.set(type, listener);
      },
      setAttribute(name, value) {
        this.attributes.set(name, value);
      },
      removeAttribute(name) {
        this.attributes.delete(name);
      },
      focus() {
        for (const element of elements.values()) element.focused = false;
        this.focused = true;
      },
    });
  }
  const data = /<script type="application\/json" id="login-data"[^>]*>([^<]*)<\/script>/.exec(html)![1]!;
  elements.get('login-data')!.textContent = data;
  const script = /<script nonce="[^"]*">([\s\S]*?)<\/script>/.exec(html)![1]!;

  const run: PageRun = {
    elements,
    requests: [],
    navigations: [],
    reloads: 0,
    async until(condition) {
      const deadline = Date.now() + 3000;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error('the page did not get there');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    click(id) {
      elements.get(id)!.listeners.get('click')!({});
    },
    submit(id) {
      const event = { prevented: false, preventDefault: () => (event.prevented = true) };
      elements.get(id)!.listeners.get('submit')!(event);
      return event;
    },
  };
  const fakeFetch = async (
    url: string,
    init: { method: string; headers: Record<string, string>; body: string },
  ) => {
    assert.equal(init.method, 'POST');
    const body = JSON.parse(init.body);
    run.requests.push({ url, headers: init.headers, body });
    const answer = await options.answer(url, body);
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
    });
  };
  const window = {
    ethereum: options.ethereum,
    location: {
      assign: (url: string) => run.navigations.push(url),
      reload: () => run.reloads++,
    },
  };
  const document = { getElementById: (id: string) => elements.get(id) ?? null };
  new Function('window', 'document', 'fetch', script)(window, document, fakeFetch);
  return run;
}

/** An EIP-1193 provider as a wallet extension injects it, signing with a real key. */
function walletProvider(options: { decline?: boolean } = {}) {
  const calls: string[] = [];
  return {
    calls,
    async request({ method, params }: { method: string; params?: unknown[] }) {
      calls.push(method);
      if (method === 'eth_requestAccounts') return [ALICE.address.toLowerCase()];
      if (method === 'eth_chainId') return '0xa';
      if (method === 'personal_sign') {
        if (options.decline) throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
        assert.equal(params?.[1], ALICE.address.toLowerCase());
        return ALICE.signMessage({ message: { raw: params?.[0] as `0x${string}` } });
      }
      throw new Error(`unexpected ${method}`);
    },
  };
}

test("the page's wallet log-in is signed and verified by the server's own check, then follows redirect_to", async () => {
  const page = input({ interactionId: 'int/1 ä' });
  const wallet = walletProvider();
  let verified: unknown;
  const run = runPage(renderLoginPage(page), {
    ethereum: wallet,
    async answer(_url, body) {
      const { message, signature } = body as { message: string; signature: string };
      verified = await verifySiweLogin({
        message,
        signature,
        expected: {
          domain: 'coffer.example',
          uri: page.siwe.uri,
          nonce: page.siwe.nonce,
          now: new Date(),
          chainIds: [1, 10],
        },
      });
      return { status: 200, body: { redirect_to: 'https://shop.example/callback?code=abc&state=xyz' } };
    },
  });
  run.click('wallet-button');
  await run.until(() => run.navigations.length > 0);
  assert.deepEqual(wallet.calls, ['eth_requestAccounts', 'eth_chainId', 'personal_sign']);
  assert.deepEqual(verified, { address: ALICE.address, chainId: 10 });
  assert.equal(run.requests.length, 1);
  assert.equal(run.requests[0]!.url, '/interaction/int%2F1%20%C3%A4/login/wallet');
  assert.equal(run.requests[0]!.headers['x-csrf-token'], 'csrf-token-1');
  assert.equal(run.requests[0]!.headers['content-type'], 'application/json');
  assert.deepEqual(run.navigations, ['https://shop.example/callback?code=abc&state=xyz']);
  assert.equal(run.elements.get('login-error')!.textContent, '');
});

test("the page shows the server's error_description when the log-in is refused", async () => {
  const run = runPage(renderLoginPage(input()), {
    ethereum: walletProvider(),
    answer: () => ({
      status: 400,
      body: { error: 'invalid_request', error_description: 'The message expired.' },
    }),
  });
  run.click('wallet-button');
  await run.until(() => run.elements.get('login-error')!.textContent !== '');
  assert.equal(run.elements.get('login-error')!.textContent, 'The message expired.');
  assert.deepEqual(run.navigations, []);
  assert.equal(run.elements.get('wallet-button')!.attributes.has('aria-disabled'), false);
});

test('the page says so when no wallet is injected, or when the person declines', async () => {
  const none = runPage(renderLoginPage(input()), { answer: () => ({ status: 500 }) });
  none.click('wallet-button');
  await none.until(() => none.elements.get('login-error')!.textContent !== '');
  assert.match(none.elements.get('login-error')!.textContent, /No Ethereum wallet was found/);

  const declined = runPage(renderLoginPage(input()), {
    ethereum: walletProvider({ decline: true }),
    answer: () => ({ status: 500 }),
  });
  declined.click('wallet-button');
  await declined.until(() => declined.elements.get('login-error')!.textContent !== '');
  assert.equal(declined.elements.get('login-error')!.textContent, 'You declined the request in your wallet.');
  assert.equal(declined.requests.length, 0);
});

test("the page's e-mail log-in: code sent (202), wrong code shown, right code follows redirect_to", async () => {
  const codes = ['111111', '424242'];
  const run = runPage(renderLoginPage(input({ methods: ['email'] })), {
    answer(url, body) {
      if (url.endsWith('/login/email')) return { status: 202 };
      const { code } = body as { code: string };
      return code === codes[1]
        ? { status: 200, body: { redirect_to: 'https://shop.example/cb?code=c1' } }
        : {
            status: 400,
            body: { error: 'invalid_request', error_description: 'The code is wrong; 4 tries left.' },
          };
    },
  });
  const { elements } = run;
  assert.equal(elements.get('code-form')!.hidden, true);
  elements.get('email')!.value = ' ada@example.org ';
  assert.equal(run.submit('email-form').prevented, true);
  await run.until(() => elements.get('code-form')!.hidden === false);
  assert.deepEqual(run.requests[0], {
    url: '/interaction/int-1/login/email',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-csrf-token': 'csrf-token-1',
    },
    body: { email: 'ada@example.org' },
  });
  assert.equal(elements.get('code')!.focused, true);
  assert.equal(elements.get('code-address')!.textContent, 'ada@example.org');
  assert.match(elements.get('login-status')!.textContent, /We sent a code to ada@example\.org/);

  elements.get('code')!.value = codes[0]!;
  run.submit('code-form');
  await run.until(() => elements.get('login-error')!.textContent !== '');
  assert.equal(elements.get('login-error')!.textContent, 'The code is wrong; 4 tries left.');

  elements.get('code')!.value = `${codes[1]} `;
  run.submit('code-form');
  await run.until(() => run.navigations.length > 0);
  assert.equal(run.requests[2]!.url, '/interaction/int-1/login/email/verify');
  assert.deepEqual(run.requests[2]!.body, { code: '424242' });
  assert.deepEqual(run.navigations, ['https://shop.example/cb?code=c1']);
});

test('the page reloads itself when the interaction continues with consent', async () => {
  const run = runPage(renderLoginPage(input()), {
    ethereum: walletProvider(),
    answer: () => ({ status: 200, body: { next: 'consent' } }),
  });
  run.click('wallet-button');
  await run.until(() => run.reloads > 0);
  assert.deepEqual(run.navigations, []);
});

test('the served script is the exported one and compiles', () => {
  const html = renderLoginPage(input());
  assert.ok(html.includes(LOGIN_PAGE_SCRIPT));
  assert.doesNotThrow(() => new Function(LOGIN_PAGE_SCRIPT));
});
