import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { type Device, deviceKey, presentMdoc, transcriptOf } from '../helpers/mdoc-device-response.ts';
import { answer, encryptionThumbprint, type ResolvedRequest } from './test-wallet.ts';
import {
  assertRejectedAt,
  openRequest,
  resultOf,
  startVerifierWorld,
  type VerifierWorld,
} from './verifier-helpers.ts';

/**
 * Coffer's verifier end to end with an mso_mdoc: issued by @owf/mdoc over the world's issuer
 * identity, presented in a DeviceResponse whose SessionTranscript the test encodes itself from
 * what the wallet read in the request (OpenID4VP 1.0 B.2.6.1: client_id, nonce, the thumbprint
 * of the response encryption key, response_uri), and answered encrypted (direct_post.jwt).
 */

const mdlQuery = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: MDL_DOCTYPE },
      claims: [{ path: [MDL_NAMESPACE, 'given_name'] }, { path: [MDL_NAMESPACE, 'family_name'] }],
    },
  ],
};

/** The OpenID4VPHandover transcript of a request as the wallet read it. */
const transcriptFor = async (request: ResolvedRequest) =>
  transcriptOf({
    clientId: request.clientId,
    nonce: request.payload.nonce,
    thumbprint: await encryptionThumbprint(request),
    responseUri: request.payload.response_uri,
  });

for (const kind of DATABASE_KINDS) {
  describe(`verifier: mso_mdoc, on ${kind}`, () => {
    let world: VerifierWorld;
    let device: Device;
    let mdoc: string;

    before(async () => {
      world = await startVerifierWorld(kind);
      device = deviceKey('P-256');
      mdoc = await issueMdoc(world.issuer, { deviceJwk: device.publicJwk });
    });
    after(() => world.close());

    test('a DeviceResponse signed over the 1.0 SessionTranscript is verified, with the elements presented', async () => {
      const { created, request } = await openRequest(world, { dcql_query: mdlQuery });
      assert.equal(request.payload.response_mode, 'direct_post.jwt');
      const presentation = presentMdoc(mdoc, {
        disclose: ['given_name', 'family_name'],
        transcript: await transcriptFor(request),
        device,
      });
      const answered = await answer(request, { mdl: [presentation] });
      assert.equal(answered.status, 200, JSON.stringify(answered.body));

      const result = await resultOf(world, created.id);
      assert.equal(result.status, 'verified', JSON.stringify(result));
      const [entry] = result.credentials.mdl;
      assert.equal(entry.format, 'mso_mdoc');
      assert.deepEqual(entry.claims, { [MDL_NAMESPACE]: { given_name: 'Ada', family_name: 'Lovelace' } });
      assert.equal(entry.issuer.trusted, true);
      assert.match(entry.issuer.id, /CN=Example Issuer Document Signer/);
      assert.equal(entry.status, 'unchecked', 'the mdoc names no status list');
      assert.deepEqual(
        entry.checks,
        ['format', 'issuer_signature', 'issuer_trusted', 'digests', 'validity', 'device_signature'].map(
          (name) => ({ name, ok: true }),
        ),
      );
    });

    test('an mdoc signature over another request’s transcript is rejected with device_signature named', async () => {
      const other = await openRequest(world, { dcql_query: mdlQuery });
      const { created, request } = await openRequest(world, { dcql_query: mdlQuery });
      const presentation = presentMdoc(mdoc, {
        disclose: ['given_name', 'family_name'],
        transcript: await transcriptFor(other.request),
        device,
      });
      assert.equal((await answer(request, { mdl: [presentation] })).status, 200);
      const entry = assertRejectedAt(await resultOf(world, created.id), 'mdl', 'device_signature');
      assert.match(entry.checks.at(-1).detail, /does not verify .* SessionTranscript/);
      assert.equal(entry.issuer.trusted, true, 'the issuer was fine; the binding was not');
    });
  });
}
