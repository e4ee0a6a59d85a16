import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '../../src/clients/client-admin.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { codeFromOutbox, postInteraction, registerRelyingParty, startLogin } from '../oidc/flow-helpers.ts';

/**
 * Web hardening (issue 7): protective headers on every kind of response, cookie flags, CSRF
 * refusals on every interaction POST, and rate limits answering 429 with Retry-After.
 */
function assertProtective(headers: Headers, where: string) {
  assert.equal(headers.get('x-content-type-options'), 'nosniff', where);
  assert.equal(headers.get('referrer-policy'), 'no-referrer', where);
  assert.equal(headers.get('x-frame-options'), 'DENY', where);
  const csp = headers.get('content-security-policy') ?? '';
  assert.match(csp, /frame-ancestors 'none'/, where);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, where);
  assert.ok(headers.get('x-request-id'), where);
}

describe('web hardening (development mode)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite', { API_RATE_LIMIT: '1000' });
  });
  after(() => server.close());

  test('JSON answers, the log-in page, the consent page and error pages all carry the protective headers', async () => {
    const rp = await registerRelyingParty(server);
    const login = await startLogin(server, rp);
    const verifier = await createClient(server.database.db, {
      name: 'Verifier',
      verifier: true,
      redirectUris: ['https://verifier.example/cb'],
    });
    const consent = await fetch(
      `${server.url}/v1/oid4vp/authorize?${new URLSearchParams({
        response_type: 'vp_token',
        response_mode: 'fragment',
        client_id: String(verifier.client_id),
        redirect_uri: 'https://verifier.example/cb',
        nonce: 'hardening-nonce-1',
        dcql_query: JSON.stringify({
          credentials: [{ id: 'q', format: 'ldp_vc', meta: { type_values: [['X']] } }],
        }),
      })}`,
      { redirect: 'manual' },
    );
    const pages: Array<[string, string]> = [
      ['/healthz', 'json'],
      ['/v1/sub_client', 'json error'],
      ['/no/such/route', 'json 404'],
      [login.interactionPath, 'log-in page'],
      [consent.headers.get('location')!, 'consent page'],
      ['/interaction/unknownunknownunknown', 'error page'],
      ['/v2/openidc/authorize?client_id=999', 'authorize error page'],
    ];
    for (const [path, label] of pages) {
      const response = await fetch(server.url + path, { redirect: 'manual' });
      assertProtective(response.headers, label);
      const isPage = label.endsWith('page');
      assert.equal(response.headers.get('content-type')?.includes('text/html') ?? false, isPage, label);
      if (isPage) {
        assert.match(response.headers.get('content-security-policy')!, /script-src 'nonce-[^']+'/, label);
        const html = await response.text();
        assert.doesNotMatch(html, /<script(?![^>]*nonce=)/, `${label}: every script carries the nonce`);
      }
    }
  });

  test('the session cookie is HttpOnly and SameSite=Lax (Secure only in production, see below)', async () => {
    const rp = await registerRelyingParty(server);
    const login = await startLogin(server, rp);
    await postInteraction(server, login.interactionPath, 'login/email', { email: 'cookie@example.org' });
    const done = await postInteraction(server, login.interactionPath, 'login/email/verify', {
      code: await codeFromOutbox(server, 'cookie@example.org'),
    });
    assert.match(
      done.cookie!,
      /^coffer_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/,
    );
  });

  test('every interaction POST refuses cross-site requests and non-JSON bodies', async () => {
    const rp = await registerRelyingParty(server);
    const login = await startLogin(server, rp);
    for (const step of ['login/wallet', 'login/email', 'login/email/verify', 'consent']) {
      const foreign = await postInteraction(
        server,
        login.interactionPath,
        step,
        {},
        { origin: 'https://evil.example' },
      );
      assert.equal(foreign.status, 403, `${step} from a foreign origin`);
      const crossSite = await postInteraction(
        server,
        login.interactionPath,
        step,
        {},
        { 'sec-fetch-site': 'cross-site' },
      );
      assert.equal(crossSite.status, 403, `${step} marked cross-site`);
      const form = await fetch(`${server.url}${login.interactionPath}/${step}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=a%40b.c',
      });
      assert.equal(form.status, 415, `${step} as a form (what a cross-site <form> can send)`);
    }
  });

  test("a browser's interaction POST needs the page's token; a headless client does not", async () => {
    const rp = await registerRelyingParty(server);
    const login = await startLogin(server, rp);
    const view = await fetch(`${server.url}${login.interactionPath}`, {
      headers: { accept: 'application/json' },
    });
    const { csrf_token: token } = (await view.json()) as { csrf_token: string };
    const ownOrigin = new URL(server.url).origin;
    const email = { email: 'page-token@example.org' };
    for (const [label, headers] of [
      ['same origin, no token', { origin: ownOrigin }],
      ['same origin, wrong token', { origin: ownOrigin, 'x-csrf-token': `${token}x` }],
      ['same-origin fetch metadata, no token', { 'sec-fetch-site': 'same-origin' }],
    ] as const) {
      const refused = await postInteraction(server, login.interactionPath, 'login/email', email, headers);
      assert.equal(refused.status, 403, label);
      assert.equal(refused.body.error, 'forbidden', label);
    }
    assert.equal(
      (
        await postInteraction(server, login.interactionPath, 'login/email', email, {
          origin: ownOrigin,
          'x-csrf-token': token,
        })
      ).status,
      202,
      'the page with its token',
    );
    assert.equal(
      (await postInteraction(server, login.interactionPath, 'login/email', email)).status,
      202,
      'a headless client',
    );
  });

  test('log-in attempts past 30 a minute from one address → 429 with Retry-After', async () => {
    const rp = await registerRelyingParty(server);
    const login = await startLogin(server, rp);
    let limited: Awaited<ReturnType<typeof postInteraction>> | undefined;
    // Fixed one-minute windows: a run that straddles a boundary needs up to twice the limit.
    for (let i = 0; i < 2 * 30 + 1 && !limited; i++) {
      const r = await postInteraction(server, login.interactionPath, 'login/email/verify', {
        code: '000000',
      });
      if (r.status === 429) limited = r;
    }
    assert.ok(limited, 'no 429 within 61 attempts');
    assert.equal(limited.body.error, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
  });

  test('failed token requests from one address are limited → 429 with Retry-After', async () => {
    const rp = await registerRelyingParty(server);
    let last: Response | undefined;
    // 300 failures a minute, in fixed windows: one boundary inside the run doubles what it takes.
    for (let i = 0; i < 2 * 300 + 1; i++) {
      last = await fetch(`${server.url}/v2/openidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          code: `wrong-${i}`,
          client_id: String(rp.clientId),
          client_secret: rp.clientSecret,
          redirect_uri: 'https://rp.example/callback',
        }),
      });
      if (last.status === 429) break;
    }
    assert.equal(last?.status, 429);
    assert.ok(Number(last?.headers.get('retry-after')) > 0);
  });
});

describe('web hardening (production mode)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite', { NODE_ENV: 'production', PUBLIC_URL: 'https://coffer.test' });
  });
  after(() => server.close());

  test('the session cookie is Secure, and HSTS is sent', async () => {
    const rp = await createClient(server.database.db, {
      name: 'RP',
      redirectUris: ['https://rp.example/cb'],
    });
    const authorize = await fetch(
      `${server.url}/v2/openidc/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: String(rp.client_id),
        redirect_uri: 'https://rp.example/cb',
        scope: 'openid',
      })}`,
      { redirect: 'manual' },
    );
    const interactionPath = authorize.headers.get('location')!;
    await postInteraction(server, interactionPath, 'login/email', { email: 'secure@example.org' });
    const done = await postInteraction(server, interactionPath, 'login/email/verify', {
      code: await codeFromOutbox(server, 'secure@example.org'),
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.match(
      done.cookie!,
      /^coffer_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/,
    );
    const health = await fetch(`${server.url}/healthz`);
    assert.match(health.headers.get('strict-transport-security') ?? '', /max-age=\d+/);
  });
});
