import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { registerPersonContext } from '../credentials/helpers.ts';
import {
  createStockHolder,
  createStockIssuer,
  deriveWithStock,
  personCredential,
  type StockHolder,
  type StockIssuer,
  signPresentationWithStock,
} from '../credentials/stock-issuer.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { answer, type ResolvedRequest } from './test-wallet.ts';
import {
  assertRejectedAt,
  openRequest,
  resultOf,
  startVerifierWorld,
  type VerifierWorld,
} from './verifier-helpers.ts';

/**
 * Coffer's verifier end to end with ldp_vc: a bbs-2023 credential issued and derived by the stock
 * Digital Bazaar stack, inside a presentation the holder signs with eddsa-rdfc-2022 (challenge =
 * nonce, domain = client_id). An ldp issuer has no certificate: the request trusts its did:key.
 */

const personQuery = {
  credentials: [
    {
      id: 'person',
      format: 'ldp_vc',
      meta: { type_values: [['https://issuer.example/vocab#PersonCredential']] },
      claims: [{ path: ['credentialSubject', 'first_name'] }],
    },
  ],
};

for (const kind of DATABASE_KINDS) {
  describe(`verifier: ldp_vc, on ${kind}`, () => {
    let world: VerifierWorld;
    let issuer: StockIssuer;
    let holder: StockHolder;
    // biome-ignore lint/suspicious/noExplicitAny: a derived credential is JSON-LD
    let derived: any;

    before(async () => {
      world = await startVerifierWorld(kind);
      await registerPersonContext(world.server);
      issuer = await createStockIssuer();
      holder = await createStockHolder();
      const signed = await issuer.issue(personCredential(issuer.did, holder.did));
      derived = await deriveWithStock(
        signed,
        ['/credentialSubject/id', '/credentialSubject/first_name'],
        new Uint8Array(),
      );
    });
    after(() => world.close());

    const presentationFor = (request: ResolvedRequest) =>
      signPresentationWithStock(derived, holder.did, holder.key, {
        challenge: request.payload.nonce,
        domain: request.clientId,
      });

    test("a stock bbs-2023 derive in the holder's eddsa-rdfc-2022 presentation is verified, its issuer trusted by DID", async () => {
      const { created, request } = await openRequest(world, {
        dcql_query: personQuery,
        trusted_issuers: [issuer.did],
      });
      assert.equal((await answer(request, { person: [await presentationFor(request)] })).status, 200);

      const result = await resultOf(world, created.id);
      assert.equal(result.status, 'verified', JSON.stringify(result));
      const [entry] = result.credentials.person;
      assert.equal(entry.format, 'ldp_vc');
      assert.deepEqual(entry.issuer, { id: issuer.did, trusted: true });
      assert.deepEqual(entry.claims.credentialSubject, { id: holder.did, first_name: 'Ada' });
      assert.equal(entry.claims.credentialSubject.last_name, undefined, 'only what was disclosed');
      assert.deepEqual(
        entry.checks,
        [
          'format',
          'issuer_signature',
          'issuer_trusted',
          'validity',
          'holder_binding',
          'subject_binding',
          'nonce',
          'audience',
        ].map((name) => ({ name, ok: true })),
      );
    });

    test('without its DID in trusted_issuers the issuer is untrusted and the result rejected at issuer_trusted', async () => {
      const stranger = await createStockIssuer();
      for (const trust of [{}, { trusted_issuers: [stranger.did] }]) {
        const { created, request } = await openRequest(world, { dcql_query: personQuery, ...trust });
        assert.equal((await answer(request, { person: [await presentationFor(request)] })).status, 200);
        const entry = assertRejectedAt(await resultOf(world, created.id), 'person', 'issuer_trusted');
        assert.deepEqual(entry.issuer, { id: issuer.did, trusted: false });
      }
    });
  });
}
