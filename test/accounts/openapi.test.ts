// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe("/openapi.json describes a person's data: erasure and export", () => {
  let server: TestServer;
  let document: any;
  before(async () => {
    server = await startTestServer('sqlite');
    document = (await server.request('GET', '/openapi.json')).body;
  });
  after(async () => {
    await server?.close();
  });

  it('DELETE /v1/user/{user_id}: the API token, the sub-client scope, an integer id, 204 and its errors', () => {
    const operation = document.paths['/v1/user/{user_id}']?.delete;
    assert.ok(operation, 'the path is documented');
    assert.deepEqual(operation.security, [{ apiToken: [] }]);
    const parameters = Object.fromEntries(operation.parameters.map((p: any) => [`${p.in}:${p.name}`, p]));
    assert.equal(parameters['path:user_id'].schema.type, 'integer');
    assert.ok(parameters['header:x-api-subclient-id']);
    assert.deepEqual(Object.keys(operation.responses).sort(), ['204', '400', '401', '403', '404', '429']);
  });

  it('GET /wallet/export and DELETE /wallet/accounts/{key}: the export document and the erasure answer', () => {
    const exported = document.paths['/wallet/export']?.get;
    assert.ok(exported);
    const schema = exported.responses['200'].content['application/json'].schema;
    const account = schema.properties.accounts.items;
    for (const field of ['did', 'tenant', 'profile', 'credentials', 'history'])
      assert.ok(account.properties[field], `an exported account has ${field}`);
    assert.ok(account.properties.credentials.items.properties.credential);
    const erase = document.paths['/wallet/accounts/{key}']?.delete;
    assert.ok(erase);
    assert.ok(erase.responses['200'].content['application/json'].schema.properties.redirect_to);
  });
});
