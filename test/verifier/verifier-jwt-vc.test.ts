import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { createDidHolder, signVpJwt } from '../helpers/issuers/holder.ts';
import { createJwtVcIssuer, type JwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { answer } from './test-wallet.ts';
import {
  assertRejectedAt,
  openRequest,
  resultOf,
  startVerifierWorld,
  type VerifierWorld,
} from './verifier-helpers.ts';

/**
 * Coffer's verifier end to end with jwt_vc_json: a VC-JWT issued with jose by a did:jwk issuer
 * (trusted for the request through trusted_issuers), inside a VP JWT that the holder signs with
 * jose under its did:key or did:jwk, bound to the request's client_id and nonce.
 */

const degreeQuery = {
  credentials: [
    {
      id: 'degree',
      format: 'jwt_vc_json',
      meta: { type_values: [['https://www.w3.org/2018/credentials#VerifiableCredential']] },
      claims: [{ path: ['credentialSubject', 'given_name'] }],
    },
  ],
};

for (const kind of DATABASE_KINDS) {
  describe(`verifier: jwt_vc_json, on ${kind}`, () => {
    let world: VerifierWorld;
    let issuer: JwtVcIssuer;

    before(async () => {
      world = await startVerifierWorld(kind);
      issuer = await createJwtVcIssuer();
    });
    after(() => world.close());

    for (const method of ['key', 'jwk'] as const) {
      test(`a VP JWT signed by the holder's did:${method} around its VC-JWT is verified`, async () => {
        const holder = await createDidHolder(method);
        const credential = await issuer.issue({ subject: holder.did });
        const { created, request } = await openRequest(world, {
          dcql_query: degreeQuery,
          trusted_issuers: [issuer.did],
        });
        const vp = await signVpJwt(holder, [credential], {
          aud: request.clientId,
          nonce: request.payload.nonce,
        });
        assert.equal((await answer(request, { degree: [vp] })).status, 200);

        const result = await resultOf(world, created.id);
        assert.equal(result.status, 'verified', JSON.stringify(result));
        const [entry] = result.credentials.degree;
        assert.equal(entry.format, 'jwt_vc_json');
        assert.deepEqual(entry.issuer, { id: issuer.did, trusted: true, trusted_by: 'did' });
        assert.equal(entry.claims.credentialSubject.given_name, 'Ada');
        assert.equal(entry.claims.credentialSubject.id, holder.did);
        assert.ok(entry.checks.every((check: { ok: boolean }) => check.ok));
        for (const name of ['issuer_signature', 'holder_binding', 'audience', 'nonce', 'subject_binding']) {
          assert.ok(
            entry.checks.some((check: { name: string }) => check.name === name),
            name,
          );
        }
      });
    }

    test('a VC whose subject is not the VP signer is rejected with subject_binding named', async () => {
      const holder = await createDidHolder();
      const someoneElse = await createDidHolder();
      const theirs = await issuer.issue({ subject: someoneElse.did });
      const { created, request } = await openRequest(world, {
        dcql_query: degreeQuery,
        trusted_issuers: [issuer.did],
      });
      const vp = await signVpJwt(holder, [theirs], { aud: request.clientId, nonce: request.payload.nonce });
      assert.equal((await answer(request, { degree: [vp] })).status, 200);
      const entry = assertRejectedAt(await resultOf(world, created.id), 'degree', 'subject_binding');
      assert.match(entry.checks.at(-1).detail, new RegExp(someoneElse.did));
    });
  });
}
