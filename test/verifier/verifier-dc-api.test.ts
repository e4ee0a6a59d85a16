import assert from 'node:assert/strict';
import { type JsonWebKey, X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { compactVerify, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { encryptResponse, resolveDcApiRequest } from './test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * Coffer's verifier over the Digital Credentials API (OpenID4VP Appendix A): the tenant gets a
 * signed request to hand to navigator.credentials.get; a wallet that is not Coffer's checks it
 * (jose with the x5c leaf, then @openid4vc/openid4vp with the page's origin), presents with the
 * origin as audience, encrypts to the request's key, and the tenant posts what the browser
 * returned, with the page's origin.
 */

const ORIGIN = 'https://shop.example';

for (const kind of DATABASE_KINDS) {
  describe(`verifier: Digital Credentials API (dc_api.jwt), on ${kind}`, () => {
    let world: VerifierWorld;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let credential: string;

    before(async () => {
      world = await startVerifierWorld(kind);
      holder = await generateKeyPair('ES256', { extractable: true });
      credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
    });
    after(() => world.close());

    const postDcApiResponse = (id: string, body: Record<string, unknown>) =>
      world.server.request('POST', `/v1/verifier/requests/${id}/dc-api-response`, {
        headers: { 'x-api-token': world.token },
        body,
      });

    test('a signed request for navigator.credentials.get, answered with the origin as audience: verified', async () => {
      const created = await world.createRequest({
        dcql_query: sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]),
        response_mode: 'dc_api.jwt',
        expected_origins: [ORIGIN],
      });
      assert.equal(created.status, 201, created.text);
      const { id, dc_api_request: dcApiRequest, authorization_request } = created.body.data;
      assert.equal(authorization_request, undefined);
      assert.equal(dcApiRequest.protocol, 'openid4vp-v1-signed');
      const jwt: string = dcApiRequest.data.request;

      // Checked with jose against the x5c leaf, as any wallet can.
      const header = decodeProtectedHeader(jwt);
      assert.equal(header.typ, 'oauth-authz-req+jwt');
      const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0]!, 'base64'));
      assert.equal(leaf.raw.toString('base64'), world.verifier.leaf.der);
      const { payload } = await compactVerify(jwt, leaf.publicKey);
      const claims = JSON.parse(new TextDecoder().decode(payload));
      assert.equal(claims.client_id, 'x509_san_dns:127.0.0.1');
      assert.equal(claims.response_mode, 'dc_api.jwt');
      assert.deepEqual(claims.expected_origins, [ORIGIN]);
      assert.equal(claims.response_uri, undefined, 'the browser carries the answer');
      assert.equal(claims.state, undefined);

      // And by @openid4vc/openid4vp, which refuses a page origin the request does not expect.
      await assert.rejects(resolveDcApiRequest(jwt, 'https://attacker.example'), /expected_origins/);
      const request = await resolveDcApiRequest(jwt, ORIGIN);
      assert.equal(request.clientId, 'x509_san_dns:127.0.0.1');

      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: `origin:${ORIGIN}`,
        nonce: request.payload.nonce,
      });
      const response = await encryptResponse(request, { vp_token: { pid: [presentation] } });

      const elsewhere = await postDcApiResponse(id, {
        origin: 'https://attacker.example',
        data: { response },
      });
      assert.equal(elsewhere.status, 400, elsewhere.text);
      assert.match(elsewhere.body.error_description, /expected_origins/);

      const answered = await postDcApiResponse(id, { origin: ORIGIN, data: { response } });
      assert.equal(answered.status, 200, answered.text);
      const result = answered.body.data;
      assert.equal(result.status, 'verified', JSON.stringify(result));
      assert.equal(result.credentials.pid[0].claims.given_name, 'Ada');
      assert.equal((await world.readResult(id)).body.data.status, 'verified');
    });

    test('unencrypted dc_api: vp_token comes back as the JSON object the browser returns, and verifies', async () => {
      const created = await world.createRequest({
        dcql_query: sdJwtQuery(PID_VCT, [['given_name']]),
        response_mode: 'dc_api',
        expected_origins: [ORIGIN],
      });
      assert.equal(created.status, 201, created.text);
      const { id, dc_api_request: dcApiRequest } = created.body.data;
      const request = await resolveDcApiRequest(dcApiRequest.data.request, ORIGIN);
      assert.equal(request.payload.client_metadata.jwks, undefined, 'no key: the answer is not encrypted');
      const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
        aud: `origin:${ORIGIN}`,
        nonce: request.payload.nonce,
      });
      const answered = await postDcApiResponse(id, {
        origin: ORIGIN,
        data: { vp_token: { pid: [presentation] } },
      });
      assert.equal(answered.status, 200, answered.text);
      assert.equal(answered.body.data.status, 'verified', JSON.stringify(answered.body.data));
    });
  });
}
