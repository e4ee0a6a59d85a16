import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { leaksInternals } from '../helpers/server.ts';
import { sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * What a tenant cannot ask for: each refusal is a 400 whose details name the field at fault (or
 * 401/403 for who asks), and nothing is created.
 */

const query = sdJwtQuery(PID_VCT, [['given_name']]);

for (const kind of DATABASE_KINDS) {
  describe(`verifier: request creation refusals, on ${kind}`, () => {
    let world: VerifierWorld;

    before(async () => {
      world = await startVerifierWorld(kind);
    });
    after(() => world.close());

    const requestCount = async () =>
      Number(
        (
          await world.server.database.db
            .selectFrom('verifier_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    const refusals: [string, Record<string, unknown>, string][] = [
      [
        'a DCQL query that is not valid',
        { dcql_query: { credentials: [{ id: 'not an id!', format: 'dc+sd-jwt' }] } },
        '/body/dcql_query',
      ],
      ['a DCQL query without credentials', { dcql_query: { credentials: [] } }, '/body/dcql_query'],
      [
        'dc_api without expected_origins',
        { dcql_query: query, response_mode: 'dc_api.jwt' },
        '/body/expected_origins',
      ],
      [
        'expected_origins without dc_api',
        { dcql_query: query, expected_origins: ['https://shop.example'] },
        '/body/expected_origins',
      ],
      [
        'a callback_url that is not https',
        { dcql_query: query, callback_url: 'http://127.0.0.1:9/callback' },
        '/body/callback_url',
      ],
      [
        'trusted_issuers that are neither PEM nor DID',
        { dcql_query: query, trusted_issuers: ['did:jwk:eyJ9', 'Example Issuer CA'] },
        '/body/trusted_issuers/1',
      ],
      [
        'transaction_data naming an mso_mdoc query',
        {
          dcql_query: {
            credentials: [
              {
                id: 'mdl',
                format: 'mso_mdoc',
                meta: { doctype_value: MDL_DOCTYPE },
                claims: [{ path: [MDL_NAMESPACE, 'given_name'] }],
              },
            ],
          },
          transaction_data: [{ type: 'payment_confirmation', credential_ids: ['mdl'] }],
        },
        '/body/transaction_data/0/credential_ids',
      ],
    ];
    for (const [what, body, path] of refusals) {
      test(`${what}: 400 naming ${path}`, async () => {
        const before = await requestCount();
        const refused = await world.createRequest(body);
        assert.equal(refused.status, 400, refused.text);
        assert.equal(await requestCount(), before, 'nothing is created');
        assert.equal(refused.body.error, 'invalid_request');
        assert.ok(
          refused.body.details.some((detail: { path: string }) => detail.path === path),
          JSON.stringify(refused.body),
        );
        assert.ok(!leaksInternals(refused.text), refused.text);
      });
    }

    test("x509_san_dns when the verifier's certificate does not name the host: 400; x509_hash is its client id", async () => {
      const elsewhere = await world.addTenant('Elsewhere', { dnsNames: ['shop.example'] });
      const refused = await world.createRequest(
        { dcql_query: query, client_id_prefix: 'x509_san_dns' },
        elsewhere.token,
      );
      assert.equal(refused.status, 400, refused.text);
      assert.deepEqual(
        refused.body.details.map((detail: { path: string }) => detail.path),
        ['/body/client_id_prefix'],
      );
      const created = await world.createRequest({ dcql_query: query }, elsewhere.token);
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.data.authorization_request, /client_id=x509_hash%3A/);
    });

    test('a client not enabled as a verifier: 403; no token: 401', async () => {
      const plain = await world.addTenant('Plain', false);
      const forbidden = await world.createRequest({ dcql_query: query }, plain.token);
      assert.equal(forbidden.status, 403, forbidden.text);
      assert.match(forbidden.body.error_description, /coffer verifier enable/);
      const anonymous = await world.server.request('POST', '/v1/verifier/requests', {
        body: { dcql_query: query },
      });
      assert.equal(anonymous.status, 401, anonymous.text);
    });
  });
}
