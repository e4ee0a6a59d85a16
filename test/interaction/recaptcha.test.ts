import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { CofferError } from '../../src/errors.ts';
import { verifyRecaptcha } from '../../src/interaction/recaptcha.ts';

interface SiteverifyRequest {
  method: string;
  contentType: string;
  form: Record<string, string>;
}

/**
 * A STAND-IN for Google's reCAPTCHA siteverify endpoint: a real HTTP server on 127.0.0.1 that
 * reads the form-encoded POST as Google does and answers what the test sets, in Google's
 * format. It knows nothing of real tokens.
 */
async function startSiteverify(t: TestContext) {
  const requests: SiteverifyRequest[] = [];
  const reply = { status: 200, body: '{}' as string, delayMs: 0 };
  const server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    requests.push({
      method: request.method ?? '',
      contentType: request.headers['content-type'] ?? '',
      form: Object.fromEntries(new URLSearchParams(body)),
    });
    setTimeout(() => {
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    }, reply.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/recaptcha/api/siteverify`;
  const answer = (value: unknown, status = 200) => {
    reply.status = status;
    reply.body = typeof value === 'string' ? value : JSON.stringify(value);
  };
  return { url, requests, reply, answer };
}

const base = (verifyUrl: string) => ({
  secret: 'tenant-secret',
  token: 'token-from-page',
  threshold: 0.5,
  verifyUrl,
  fetch,
});

async function refused(attempt: Promise<unknown>, description: RegExp) {
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(error instanceof CofferError, String(error));
    assert.equal(error.code, 'invalid_request');
    assert.match(error.message, description);
    return true;
  });
}

test('a good score passes, and the secret, token and address go as a form POST', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, score: 0.9, action: 'login', hostname: 'coffer.example' });
  await verifyRecaptcha({ ...base(google.url), remoteIp: '203.0.113.7', action: 'login' });
  assert.deepEqual(google.requests, [
    {
      method: 'POST',
      contentType: 'application/x-www-form-urlencoded',
      form: { secret: 'tenant-secret', response: 'token-from-page', remoteip: '203.0.113.7' },
    },
  ]);
});

test('a score equal to the threshold passes; remoteip is left out when unknown', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, score: 0.5, action: 'login' });
  await verifyRecaptcha(base(google.url));
  assert.deepEqual(google.requests[0]?.form, { secret: 'tenant-secret', response: 'token-from-page' });
});

test('refused: a score under the threshold', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, score: 0.3, action: 'login' });
  await refused(verifyRecaptcha(base(google.url)), /judged this request as automated/);
});

test('refused: Google says the token failed', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: false, 'error-codes': ['timeout-or-duplicate'] });
  await refused(verifyRecaptcha(base(google.url)), /expired or was already used/);
  google.answer({ success: false, 'error-codes': ['invalid-input-response'] });
  await refused(verifyRecaptcha(base(google.url)), /token is not valid/);
  google.answer({ success: false, 'error-codes': ['invalid-input-secret'] });
  await refused(verifyRecaptcha(base(google.url)), /could not be verified/);
});

test('refused: an answer without a score (a v2 token)', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, hostname: 'coffer.example' });
  await refused(verifyRecaptcha(base(google.url)), /no score/);
});

test('refused: a token made for another action, when the action is checked', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, score: 0.9, action: 'signup' });
  await refused(verifyRecaptcha({ ...base(google.url), action: 'login' }), /another action/);
});

test('refused without asking Google: no token', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, score: 1 });
  await refused(verifyRecaptcha({ ...base(google.url), token: undefined }), /needs a reCAPTCHA token/);
  await refused(verifyRecaptcha({ ...base(google.url), token: '' }), /needs a reCAPTCHA token/);
  assert.equal(google.requests.length, 0);
});

test('fails closed: an answer other than 200', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, score: 1 }, 503);
  await refused(verifyRecaptcha(base(google.url)), /could not be verified just now/);
});

test('fails closed: an answer that is not JSON', async (t) => {
  const google = await startSiteverify(t);
  google.answer('<html>captive portal</html>');
  await refused(verifyRecaptcha(base(google.url)), /could not be verified just now/);
});

test('fails closed: nothing listening', async (t) => {
  const google = await startSiteverify(t);
  const closedUrl = google.url.replace(/:\d+\//, ':1/');
  await refused(verifyRecaptcha(base(closedUrl)), /could not be verified just now/);
});

test('fails closed: an answer slower than the timeout', async (t) => {
  const google = await startSiteverify(t);
  google.answer({ success: true, score: 1 });
  google.reply.delayMs = 1000;
  const started = Date.now();
  await refused(verifyRecaptcha({ ...base(google.url), timeoutMs: 200 }), /could not be verified just now/);
  assert.ok(Date.now() - started < 900);
});
