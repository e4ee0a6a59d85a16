// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import type { TestResponse } from '../helpers/server.ts';
import { type IssuerWorld, proofKey, startIssuerWorld } from './issuer-helpers.ts';

/** The project's error body: a code, a sentence, and for a bad field the field's path. */
function assertError(response: TestResponse, status: number, code: string, path?: string) {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.error, code, response.text);
  assert.equal(typeof response.body.error_description, 'string', response.text);
  if (path !== undefined) {
    assert.ok(
      (response.body.details ?? []).some((d: { path: string }) => d.path === path),
      `expected a detail at ${path}: ${response.text}`,
    );
  }
}

const DEGREE = {
  format: 'dc+sd-jwt',
  vct: 'https://example.edu/degree',
  claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
  status: true,
};

for (const kind of DATABASE_KINDS) {
  describe(`issuer API: who may do what, and bad bodies (${kind})`, () => {
    let world: IssuerWorld;
    let plain: { clientId: number; token: string };
    let other: { clientId: number; token: string };
    let offerId: string;
    const as = (token: string, method: string, path: string, body?: unknown) =>
      world.server.request(method, path, {
        headers: { 'x-api-token': token },
        ...(body === undefined ? {} : { body }),
      });

    before(async () => {
      // The world's own server takes callbacks to any address; the refusal is checked below.
      world = await startIssuerWorld(kind, { ALLOW_PRIVATE_TARGETS: 'false' });
      plain = await world.server.createMaster('Not an issuer');
      other = await world.server.createMaster('Other issuer');
      const enabled = await coffer(world.server, 'issuer', 'enable', '--client', String(other.clientId));
      assert.equal(enabled.code, 0, enabled.stderr);
      assert.equal((await world.api('PUT', '/v1/issuer/configurations/degree', DEGREE)).status, 201);
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada', degree: 'BSc' } },
      });
      assert.equal(offer.status, 201, offer.text);
      offerId = offer.body.data.id;
    });
    after(() => world.close());

    it('a client that is not an issuer gets 403 on every tenant endpoint', async () => {
      const calls: [string, string, unknown?][] = [
        ['PUT', '/v1/issuer/configurations/degree', DEGREE],
        ['GET', '/v1/issuer/configurations'],
        ['DELETE', '/v1/issuer/configurations/degree'],
        ['POST', '/v1/issuer/offers', { configuration_ids: ['degree'], claims: { degree: {} } }],
        ['GET', `/v1/issuer/offers/${offerId}`],
        ['PUT', `/v1/issuer/offers/${offerId}/claims`, { claims: { degree: { given_name: 'Ada' } } }],
        ['GET', '/v1/issuer/credentials'],
        ['GET', `/v1/issuer/credentials?offer=${offerId}`],
        [
          'POST',
          '/v1/issuer/credentials/urn:uuid:00000000-0000-4000-8000-000000000000/status',
          { status: 'revoked' },
        ],
      ];
      for (const [method, path, body] of calls) {
        const response = await as(plain.token, method, path, body);
        assertError(response, 403, 'forbidden');
      }
      // Nothing was touched: the real issuer still has its configuration and its offer open.
      assert.equal((await world.api('GET', '/v1/issuer/configurations')).body.data.length, 1);
      assert.equal((await world.api('GET', `/v1/issuer/offers/${offerId}`)).body.data.status, 'offered');
    });

    it("another tenant's offer, credentials and configuration are not found", async () => {
      assertError(await as(other.token, 'GET', `/v1/issuer/offers/${offerId}`), 404, 'not_found');
      assertError(
        await as(other.token, 'PUT', `/v1/issuer/offers/${offerId}/claims`, {
          claims: { degree: { given_name: 'Eve' } },
        }),
        404,
        'not_found',
      );
      assertError(await as(other.token, 'DELETE', '/v1/issuer/configurations/degree'), 404, 'not_found');
      assert.deepEqual((await as(other.token, 'GET', '/v1/issuer/configurations')).body.data, []);
      assert.deepEqual(
        (await as(other.token, 'GET', `/v1/issuer/credentials?offer=${offerId}`)).body.data,
        [],
      );
      // An offer of the other tenant cannot name this tenant's configuration.
      assertError(
        await as(other.token, 'POST', '/v1/issuer/offers', {
          configuration_ids: ['degree'],
          claims: { degree: { given_name: 'Eve' } },
        }),
        400,
        'invalid_request',
        '/body/configuration_ids/0',
      );
      // Nor revoke its credentials (none issued here: an unknown id is 404 all the same).
      assertError(
        await as(other.token, 'POST', '/v1/issuer/credentials/urn:uuid:1/status', { status: 'revoked' }),
        404,
        'not_found',
      );
    });

    it('bad configuration bodies are 400 with the field named', async () => {
      const bad: [unknown, string][] = [
        [{ format: 'dc+sd-jwt', claims: [] }, '/body/vct'],
        [{ format: 'mso_mdoc', claims: [] }, '/body/doctype'],
        [{ format: 'jwt_vc_json', claims: [] }, '/body/type'],
        [{ format: 'ldp_vc', claims: [] }, '/body/type'],
        [{ format: 'dc+sd-jwt', vct: 'x', doctype: 'y', claims: [] }, '/body/doctype'],
        [
          { format: 'mso_mdoc', doctype: 'org.iso.18013.5.1.mDL', claims: [{ path: ['given_name'] }] },
          '/body/claims/0/path',
        ],
        [
          {
            format: 'mso_mdoc',
            doctype: 'org.iso.18013.5.1.mDL',
            claims: [{ path: ['org.iso.18013.5.1', 'given_name', 'x'] }],
          },
          '/body/claims/0/path',
        ],
        [
          {
            format: 'mso_mdoc',
            doctype: 'org.iso.18013.5.1.mDL',
            claims: [{ path: ['org.iso.18013.5.1', 0] }],
          },
          '/body/claims/0/path',
        ],
        [{ format: 'dc+sd-jwt', vct: 'x', claims: [{ path: [0, 'a'] }] }, '/body/claims/0/path'],
        // W3C paths point into the credential: from credentialSubject.
        [{ format: 'ldp_vc', type: 'Degree', claims: [{ path: ['name'] }] }, '/body/claims/0/path'],
        [{ format: 'jwt_vc_json', type: 'Degree', claims: [{ path: ['name'] }] }, '/body/claims/0/path'],
        [
          { format: 'dc+sd-jwt', vct: 'x', claims: [{ path: ['a'] }, { path: ['b'] }, { path: ['a'] }] },
          '/body/claims/2/path',
        ],
        [{ format: 'ldp_vc', type: 'Degree', claims: [], batch_size: 2 }, '/body/batch_size'],
        [
          { format: 'mso_mdoc', doctype: 'd', claims: [], from_profile: { given_name: 'first_name' } },
          '/body/from_profile',
        ],
      ];
      for (const [body, path] of bad) {
        const response = await world.api('PUT', '/v1/issuer/configurations/bad', body);
        assertError(response, 400, 'invalid_request', path);
      }
      // Schema-level refusals name their field as well.
      assertError(
        await world.api('PUT', '/v1/issuer/configurations/bad', { format: 'mdoc', doctype: 'd', claims: [] }),
        400,
        'invalid_request',
      );
      assertError(
        await world.api('PUT', '/v1/issuer/configurations/bad', { ...DEGREE, batch_size: 101 }),
        400,
        'invalid_request',
      );
      assertError(
        await world.api('PUT', `/v1/issuer/configurations/${encodeURIComponent('has space')}`, DEGREE),
        400,
        'invalid_request',
      );
      assert.equal((await world.api('GET', '/v1/issuer/configurations')).body.data.length, 1);
      // batch_size above 1 is fine for the other formats.
      const batched = await world.api('PUT', '/v1/issuer/configurations/batched', {
        ...DEGREE,
        batch_size: 3,
      });
      assert.equal(batched.status, 201, batched.text);
      assert.equal((await world.api('DELETE', '/v1/issuer/configurations/batched')).status, 204);
    });

    it('a scope names one configuration across tenants: 409', async () => {
      const scoped = { ...DEGREE, scope: `degree_${kind}` };
      assert.equal((await world.api('PUT', '/v1/issuer/configurations/scoped', scoped)).status, 201);
      // The same configuration again keeps its scope (200, replaced).
      assert.equal((await world.api('PUT', '/v1/issuer/configurations/scoped', scoped)).status, 200);
      assertError(await world.api('PUT', '/v1/issuer/configurations/scoped2', scoped), 409, 'conflict');
      assertError(await as(other.token, 'PUT', '/v1/issuer/configurations/scoped', scoped), 409, 'conflict');
      assert.equal((await world.api('DELETE', '/v1/issuer/configurations/scoped')).status, 204);
      // Once deleted, the scope is free for the other tenant.
      const taken = await as(other.token, 'PUT', '/v1/issuer/configurations/scoped', scoped);
      assert.equal(taken.status, 201, taken.text);
    });

    it('offers naming unknown configurations, undescribed or missing claims are 400', async () => {
      const offer = (body: Record<string, unknown>) => world.api('POST', '/v1/issuer/offers', body);
      assertError(
        await offer({ configuration_ids: ['degree', 'nope'], claims: { degree: { given_name: 'A' } } }),
        400,
        'invalid_request',
        '/body/configuration_ids/1',
      );
      assertError(
        await offer({
          configuration_ids: ['degree'],
          claims: { degree: { given_name: 'A', shoe_size: 44 } },
        }),
        400,
        'invalid_request',
        '/body/claims/degree/shoe_size',
      );
      assertError(
        await offer({ configuration_ids: ['degree'], claims: { degree: { degree: 'BSc' } } }),
        400,
        'invalid_request',
        '/body/claims/degree/given_name',
      );
      assertError(
        await offer({ configuration_ids: ['degree'], claims: { other: { given_name: 'A' } } }),
        400,
        'invalid_request',
        '/body/claims/other',
      );
      assertError(
        await offer({ configuration_ids: ['degree'], claims: {} }),
        400,
        'invalid_request',
        '/body/claims/degree',
      );
      assertError(
        await offer({
          configuration_ids: ['degree'],
          claims: { degree: { given_name: 'A' } },
          grant: 'authorization_code',
          tx_code: {},
        }),
        400,
        'invalid_request',
        '/body/tx_code',
      );
      assertError(
        await offer({
          configuration_ids: ['degree'],
          claims: { degree: { given_name: 'A' } },
          user_id: 999_999,
        }),
        400,
        'invalid_request',
        '/body/user_id',
      );
      assertError(
        await offer({
          configuration_ids: ['degree'],
          claims: { degree: { given_name: 'A' } },
          expires_in: 86_401,
        }),
        400,
        'invalid_request',
      );
      // The deferred claims are checked the same way.
      const deferred = await offer({ configuration_ids: ['degree'] });
      assert.equal(deferred.status, 201, deferred.text);
      assertError(
        await world.api('PUT', `/v1/issuer/offers/${deferred.body.data.id}/claims`, {
          claims: { degree: { degree: 'BSc' } },
        }),
        400,
        'invalid_request',
        '/body/claims/degree/given_name',
      );
      const completed = await world.api('PUT', `/v1/issuer/offers/${deferred.body.data.id}/claims`, {
        claims: { degree: { given_name: 'Ada' } },
      });
      assert.equal(completed.status, 200, completed.text);
      assertError(
        await world.api('PUT', `/v1/issuer/offers/${deferred.body.data.id}/claims`, {
          claims: { degree: { given_name: 'Ada' } },
        }),
        409,
        'conflict',
      );
    });

    it('a callback_url to a private address is refused unless ALLOW_PRIVATE_TARGETS', async () => {
      const claims = { degree: { given_name: 'Ada' } };
      for (const url of [
        'https://127.0.0.1/cb',
        'https://10.0.0.8/cb',
        'https://[::1]/cb',
        'https://localhost/cb',
        'https://169.254.169.254/latest',
        'http://issuer.example.org/cb',
        'https://user:pw@issuer.example.org/cb',
        'not a url',
      ]) {
        assertError(
          await world.api('POST', '/v1/issuer/offers', {
            configuration_ids: ['degree'],
            claims,
            callback_url: url,
          }),
          400,
          'invalid_request',
          '/body/callback_url',
        );
      }
      const fine = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims,
        callback_url: 'https://issuer.example.org/cb',
      });
      assert.equal(fine.status, 201, fine.text);
      const allowing = await startIssuerWorld(kind, { ALLOW_PRIVATE_TARGETS: 'true' });
      try {
        assert.equal((await allowing.api('PUT', '/v1/issuer/configurations/degree', DEGREE)).status, 201);
        const local = await allowing.api('POST', '/v1/issuer/offers', {
          configuration_ids: ['degree'],
          claims,
          callback_url: 'https://127.0.0.1/cb',
        });
        assert.equal(local.status, 201, local.text);
      } finally {
        await allowing.close();
      }
    });

    it("a notification whose event is one of Object.prototype's names is 400, not 500", async () => {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada' } },
      });
      const document = (await (await fetch(offer.body.data.credential_offer_uri)).json()) as any;
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code':
            document.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'],
        },
      });
      assert.equal(token.status, 200, token.text);
      const bearer = { authorization: `Bearer ${token.body.access_token}` };
      const { c_nonce } = (await (await fetch(`${world.issuerId}/nonce`, { method: 'POST' })).json()) as any;
      const key = await proofKey();
      const issued = await world.server.request('POST', `/issuers/${world.clientId}/credential`, {
        headers: bearer,
        body: {
          credential_configuration_id: 'degree',
          proofs: { jwt: [await key.proof({ aud: world.issuerId, nonce: c_nonce })] },
        },
      });
      assert.equal(issued.status, 200, issued.text);
      for (const event of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const answer = await world.server.request('POST', `/issuers/${world.clientId}/notification`, {
          headers: bearer,
          body: { notification_id: issued.body.notification_id, event },
        });
        assertError(answer, 400, 'invalid_notification_request');
      }
      const accepted = await world.server.request('POST', `/issuers/${world.clientId}/notification`, {
        headers: bearer,
        body: { notification_id: issued.body.notification_id, event: 'credential_accepted' },
      });
      assert.equal(accepted.status, 204, accepted.text);
      const tracking = await world.api('GET', `/v1/issuer/offers/${offer.body.data.id}`);
      assert.equal(tracking.body.data.status, 'accepted');
    });

    it('DELETE of a configuration is 204, then 404, and it leaves the metadata', async () => {
      assert.equal((await world.api('PUT', '/v1/issuer/configurations/gone', DEGREE)).status, 201);
      const metadataUrl = `${world.server.url}/.well-known/openid-credential-issuer/issuers/${world.clientId}`;
      const before = (await (await fetch(metadataUrl)).json()) as any;
      assert.ok(before.credential_configurations_supported.gone);
      const deleted = await world.api('DELETE', '/v1/issuer/configurations/gone');
      assert.equal(deleted.status, 204);
      assert.equal(deleted.text, '');
      assertError(await world.api('DELETE', '/v1/issuer/configurations/gone'), 404, 'not_found');
      const afterwards = (await (await fetch(metadataUrl)).json()) as any;
      assert.equal(afterwards.credential_configurations_supported.gone, undefined);
      assert.ok(afterwards.credential_configurations_supported.degree);
      assertError(
        await world.api('POST', '/v1/issuer/offers', {
          configuration_ids: ['gone'],
          claims: { gone: { given_name: 'A' } },
        }),
        400,
        'invalid_request',
        '/body/configuration_ids/0',
      );
    });
  });
}
