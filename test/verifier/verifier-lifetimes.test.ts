import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer, type ResolvedRequest } from './test-wallet.ts';
import {
  eventually,
  openRequest,
  presentSdJwt,
  resultOf,
  sdJwtQuery,
  startVerifierWorld,
  type VerifierWorld,
} from './verifier-helpers.ts';

/**
 * Time at the verifier: a request expires after expires_in and takes no late answer; the claims
 * of a result go RESULT_RETENTION seconds after the tenant first read them, and the checks stay.
 */

const query = sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]);

for (const kind of DATABASE_KINDS) {
  describe(`verifier: expiry and result retention (RESULT_RETENTION=1), on ${kind}`, () => {
    let world: VerifierWorld;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let credential: string;

    before(async () => {
      world = await startVerifierWorld(kind, { RESULT_RETENTION: '1' });
      holder = await generateKeyPair('ES256', { extractable: true });
      credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
    });
    after(() => world.close());

    const presentationFor = (request: ResolvedRequest) =>
      presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });

    test('expires_in 1: read after 1.5 s the request is expired, and a late answer is refused', async () => {
      const untouched = await world.createRequest({ dcql_query: query, expires_in: 1 });
      assert.equal(untouched.status, 201, untouched.text);
      const { created, request } = await openRequest(world, { dcql_query: query, expires_in: 1 });
      const presentation = await presentationFor(request);
      await sleep(1500);

      assert.equal((await resultOf(world, untouched.body.data.id)).status, 'expired');
      assert.equal((await resultOf(world, created.id)).status, 'expired');
      const late = await answer(request, { pid: [presentation] });
      assert.equal(late.status, 400, JSON.stringify(late.body));
      assert.match(late.body.error_description, /expired/);
      const result = await resultOf(world, created.id);
      assert.equal(result.status, 'expired');
      assert.equal(result.credentials, undefined);
    });

    test('the claims are there at the first read and gone about 2 s later; the checks stay', async () => {
      const { created, request } = await openRequest(world, { dcql_query: query });
      assert.equal((await answer(request, { pid: [await presentationFor(request)] })).status, 200);

      const first = await resultOf(world, created.id);
      assert.equal(first.status, 'verified');
      assert.equal(first.claims_deleted, undefined);
      assert.equal(first.credentials.pid[0].claims.given_name, 'Ada');

      await sleep(2000);
      const later = await resultOf(world, created.id);
      assert.equal(later.status, 'verified');
      assert.equal(later.claims_deleted, true);
      const [entry] = later.credentials.pid;
      assert.equal(entry.claims, undefined);
      assert.deepEqual(entry.checks, first.credentials.pid[0].checks);
      assert.ok(entry.checks.length > 0 && entry.checks.every((check: { ok: boolean }) => check.ok));

      // Not only hidden: the worker deletes the sealed claims from the database.
      await eventually(async () => {
        const row = await world.server.database.db
          .selectFrom('verifier_requests')
          .select('claims_sealed')
          .where('id', '=', created.id)
          .executeTakeFirstOrThrow();
        return row.claims_sealed === null;
      }, 'the claims to be deleted');
    });
  });
}
