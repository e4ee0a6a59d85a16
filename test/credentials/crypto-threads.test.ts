import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { logInUser, registerPersonContext } from './helpers.ts';
import { createStockIssuer, personCredential, verifyPresentedWithStock } from './stock-issuer.ts';

/** The same results whether bbs-2023 runs in worker threads (the default) or on the main thread. */
for (const threads of ['0', '1']) {
  describe(`credentials with CRYPTO_THREADS=${threads}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer('sqlite', { CRYPTO_THREADS: threads });
    });
    after(() => server.close());

    test('store verifies, refuses a forgery and an unknown context, and presentations verify with the stock verifier', async () => {
      const rp = await registerRelyingParty(server);
      const user = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      const { token } = await server.createMaster();
      const issuer = await createStockIssuer();
      const signed = await issuer.issue(personCredential(issuer.did, user.did));
      const store = (vc: unknown) =>
        server.request('POST', '/v1/vc/issuer/store', { headers: { 'x-api-token': token }, body: { vc } });

      const unknownContext = await store(signed);
      assert.equal(unknownContext.status, 422);
      assert.match(unknownContext.body.error_description, /does not know/);
      await registerPersonContext(server);
      const forged = {
        ...signed,
        credentialSubject: { ...(signed['credentialSubject'] as object), last_name: 'X' },
      };
      assert.equal((await store(forged)).status, 422);
      assert.equal((await store(signed)).status, 201);

      const presented = await server.request('POST', '/v1/openidc/credentials/proof', {
        headers: user.bearer,
        body: {
          vcIdFields: { [signed['id'] as string]: ['/credentialSubject/last_name'] },
          options: { presentationHeader: 'h' },
        },
      });
      assert.equal(presented.status, 200, presented.text);
      const verdict = await verifyPresentedWithStock(
        presented.body.data.credentials[0],
        new TextEncoder().encode('h'),
      );
      assert.equal(verdict.verified, true);
    });
  });
}
