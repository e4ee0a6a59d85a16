// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Every path of the issuer and the methods it answers, as a tenant's developer reads them. */
const ISSUER_PATHS: Record<string, string[]> = {
  '/v1/issuer/configurations/{id}': ['delete', 'put'],
  '/v1/issuer/configurations': ['get'],
  '/v1/issuer/offers': ['post'],
  '/v1/issuer/offers/{id}': ['get'],
  '/v1/issuer/offers/{id}/claims': ['put'],
  '/v1/issuer/credentials': ['get'],
  '/v1/issuer/credentials/{id}/status': ['post'],
  '/v1/status-lists/{id}': ['get'],
  '/.well-known/openid-credential-issuer/issuers/{clientId}': ['get'],
  '/issuers/{clientId}/offers/{id}': ['get'],
  '/issuers/{clientId}/nonce': ['post'],
  '/issuers/{clientId}/credential': ['post'],
  '/issuers/{clientId}/deferred-credential': ['post'],
  '/issuers/{clientId}/notification': ['post'],
  '/offer/{id}': ['get'],
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** The values a union of literals allows, however the generator spells it. */
const literals = (schema: any): string[] =>
  (schema.enum ?? schema.anyOf?.flatMap((s: any) => s.enum ?? [s.const]) ?? []).slice().sort();

/** A schema with its $ref followed into components. */
function resolved(document: any, schema: any): any {
  if (schema?.$ref) return resolved(document, document.components.schemas[schema.$ref.split('/').pop()]);
  return schema;
}

describe('/openapi.json describes the issuer', () => {
  let server: TestServer;
  let document: any;
  before(async () => {
    server = await startTestServer('sqlite');
    const response = await server.request('GET', '/openapi.json');
    assert.equal(response.status, 200);
    document = response.body;
  });
  after(() => server.close());

  it('lists every issuer path with exactly its methods', () => {
    const listed = Object.fromEntries(
      Object.entries(document.paths as Record<string, any>)
        .filter(([path]) => path in ISSUER_PATHS)
        .map(([path, item]) => [path, METHODS.filter((m) => item[m]).sort()]),
    );
    assert.deepEqual(listed, Object.fromEntries(Object.entries(ISSUER_PATHS).map(([p, m]) => [p, m.sort()])));
    const issuerish = Object.keys(document.paths).filter(
      (p) =>
        /issuer|status-lists|^\/offer\//.test(p) &&
        !p.startsWith('/v1/vc/issuer') &&
        !p.startsWith('/console/') &&
        !p.endsWith('/.well-known/openid-federation'),
    );
    assert.deepEqual(issuerish.sort(), Object.keys(ISSUER_PATHS).sort(), 'no issuer path is left out');
  });

  it("lists the federation endpoints (a tenant issuer's Entity Configuration among them) under their own tag", () => {
    for (const path of [
      '/.well-known/openid-federation',
      '/issuers/{clientId}/.well-known/openid-federation',
      '/federation/fetch',
      '/federation/list',
    ]) {
      const item = document.paths[path];
      assert.ok(item?.get, path);
      assert.deepEqual(
        Object.keys(item).filter((m) => METHODS.includes(m)),
        ['get'],
        path,
      );
      assert.deepEqual(item.get.tags, ['Federation'], path);
    }
  });

  it('the tenant API carries its bodies, answers and API token', () => {
    const put = document.paths['/v1/issuer/configurations/{id}'].put;
    assert.deepEqual(put.security, [{ apiToken: [] }]);
    const configuration = resolved(document, put.requestBody.content['application/json'].schema);
    assert.deepEqual(configuration.required.sort(), ['claims', 'format']);
    assert.deepEqual(literals(configuration.properties.format), [
      'dc+sd-jwt',
      'jwt_vc_json',
      'ldp_vc',
      'mso_mdoc',
    ]);
    for (const member of ['vct', 'doctype', 'type', 'scope', 'status', 'batch_size', 'from_profile']) {
      assert.ok(configuration.properties[member], member);
    }
    // Claim paths are pointers into the credential, W3C ones from credentialSubject.
    const claim = resolved(document, configuration.properties.claims.items);
    assert.match(claim.properties.path.description, /Appendix C/);
    assert.match(claim.properties.path.description, /\["credentialSubject", "degree", "name"\]/);
    assert.ok(put.responses['201'] && put.responses['200'] && put.responses['409'] && put.responses['403']);
    assert.ok(document.paths['/v1/issuer/configurations/{id}'].delete.responses['204']);

    const offer = document.paths['/v1/issuer/offers'].post;
    const offerBody = resolved(document, offer.requestBody.content['application/json'].schema);
    assert.deepEqual(offerBody.required, ['configuration_ids']);
    for (const member of ['claims', 'user_id', 'grant', 'tx_code', 'expires_in', 'callback_url']) {
      assert.ok(offerBody.properties[member], member);
    }
    assert.match(offerBody.properties.claims.description, /"credentialSubject"/);
    const created = resolved(document, offer.responses['201'].content['application/json'].schema);
    assert.ok(created.properties.data.properties.offer_link);
    assert.ok(created.properties.data.properties.tx_code);

    const tracking =
      document.paths['/v1/issuer/offers/{id}'].get.responses['200'].content['application/json'];
    const trackingData = resolved(document, tracking.schema).properties.data;
    assert.ok(trackingData.properties.events && trackingData.properties.credentials);
    const status = document.paths['/v1/issuer/credentials/{id}/status'].post;
    const statusBody = resolved(document, status.requestBody.content['application/json'].schema);
    assert.deepEqual(literals(statusBody.properties.status), ['revoked', 'suspended', 'valid']);
    assert.ok(document.paths['/v1/issuer/credentials'].get.parameters.some((p: any) => p.name === 'offer'));
  });

  it('the wallet-facing endpoints carry their bodies: JSON or an encrypted request', () => {
    const credential = document.paths['/issuers/{clientId}/credential'].post;
    assert.equal(credential.security, undefined);
    const content = credential.requestBody.content;
    const request = resolved(document, content['application/json'].schema);
    for (const member of ['credential_configuration_id', 'credential_identifier', 'proofs']) {
      assert.ok(request.properties[member], member);
    }
    assert.equal(content['application/jwt'].schema.type, 'string');
    assert.ok(credential.responses['200'] && credential.responses['202']);
    const deferred = document.paths['/issuers/{clientId}/deferred-credential'].post.requestBody.content;
    assert.deepEqual(resolved(document, deferred['application/json'].schema).required, ['transaction_id']);
    const notification = document.paths['/issuers/{clientId}/notification'].post;
    assert.deepEqual(
      resolved(document, notification.requestBody.content['application/json'].schema).required.sort(),
      ['event', 'notification_id'],
    );
    assert.ok(notification.responses['204']);
    const nonce =
      document.paths['/issuers/{clientId}/nonce'].post.responses['200'].content['application/json'];
    assert.ok(resolved(document, nonce.schema).properties.c_nonce);
    const clientId = document.paths['/issuers/{clientId}/nonce'].post.parameters.find(
      (p: any) => p.name === 'clientId',
    );
    assert.equal(clientId.in, 'path');
    assert.ok(clientId.schema.pattern);
  });

  it('the token endpoint names the pre-authorized code grant', () => {
    const token = document.paths['/v2/openidc/token'].post.requestBody.content;
    const text = JSON.stringify(token);
    assert.match(text, /pre-authorized_code/);
    assert.match(text, /tx_code/);
  });
});
