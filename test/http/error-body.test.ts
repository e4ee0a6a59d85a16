import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** DESIGN.md, Errors: an error body stays small whatever the request. */
describe('error bodies never amplify their request', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer('sqlite');
    token = (await server.createMaster('Master')).token;
  });
  after(() => server?.close());

  test('a 40 KB body with thousands of invalid items: at most 20 details, a body far smaller than the request', async () => {
    const body = JSON.stringify({
      profile: {
        email_address: 'ada@example.org',
        first_name: 'Ada',
        last_name: 'Lovelace',
        language_others: Array.from({ length: 5000 }, () => 7),
      },
    });
    assert.ok(body.length > 10_000);
    const response = await fetch(`${server.url}/v1/user/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': token },
      body,
    });
    const text = await response.text();
    assert.equal(response.status, 400);
    const answer = JSON.parse(text);
    assert.equal(answer.error, 'invalid_request');
    assert.ok(answer.details.length <= 20, `${answer.details.length} details`);
    assert.ok(answer.details.length > 1);
    assert.ok(text.length < 8192, `${text.length} bytes`);
  });

  test('a huge invalid value is not echoed in full', async () => {
    const huge = 'x'.repeat(100_000);
    const response = await fetch(`${server.url}/v1/vc/issuer/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': token },
      body: JSON.stringify({ vc: huge, format: huge }),
    });
    const text = await response.text();
    assert.equal(response.status, 400);
    assert.ok(text.length < 8192, `${text.length} bytes`);
    assert.ok(!text.includes('x'.repeat(500)));
  });
});
