import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer, encryptResponse, postForm, resolveRequest } from './test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * Whoever sees the QR code has the request object: its response URI, state and encryption key.
 * The attacker answers first — a plain error, or a presentation that cannot verify — hoping to
 * settle the request before the person's wallet does. The attempt is recorded, and the
 * genuine presentation that follows still settles the request as verified.
 */
for (const kind of DATABASE_KINDS) {
  describe(`verifier: an answer from whoever saw the QR code is not final, on ${kind}`, () => {
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

    async function opened() {
      const created = await world.createRequest({
        dcql_query: sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]),
      });
      assert.equal(created.status, 201, created.text);
      // The attacker and the person's wallet read the same QR code.
      const seen = await resolveRequest(created.body.data.authorization_request);
      return { id: created.body.data.id as string, seen, link: created.body.data.authorization_request };
    }

    async function genuineAnswer(link: string) {
      const request = await resolveRequest(link);
      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      return answer(request, { pid: [presentation] });
    }

    const readResult = async (id: string) => (await world.readResult(id)).body.data;

    test('a spoofed access_denied is recorded as declined; the genuine presentation then verifies', async () => {
      const { id, seen, link } = await opened();
      const spoofed = await postForm(seen.payload.response_uri, {
        error: 'access_denied',
        state: seen.payload.state,
      });
      assert.equal(spoofed.status, 200);
      const declined = await readResult(id);
      assert.equal(declined.status, 'declined');
      assert.equal(declined.error.error, 'access_denied');

      // The person's wallet fetches the request only now: it is still served.
      const genuine = await genuineAnswer(link);
      assert.equal(genuine.status, 200, JSON.stringify(genuine.body));
      const verified = await readResult(id);
      assert.equal(verified.status, 'verified');
      assert.equal(verified.credentials.pid[0].claims.given_name, 'Ada');
      assert.equal(verified.error, undefined, 'the spoofed error is gone with the verified answer');
    });

    test('a spoofed presentation that cannot verify is recorded as rejected; the genuine one then verifies', async () => {
      const { id, seen, link } = await opened();
      const garbage = await encryptResponse(seen, {
        vp_token: { pid: ['not.an.sd-jwt~'] },
        state: seen.payload.state,
      });
      assert.equal((await postForm(seen.payload.response_uri, { response: garbage })).status, 200);
      assert.equal((await readResult(id)).status, 'rejected');
      assert.equal((await genuineAnswer(link)).status, 200);
      assert.equal((await readResult(id)).status, 'verified');
    });

    test('after the verified presentation nothing changes it: a late error is refused', async () => {
      const { id, seen, link } = await opened();
      assert.equal((await genuineAnswer(link)).status, 200);
      const late = await postForm(seen.payload.response_uri, {
        error: 'access_denied',
        state: seen.payload.state,
      });
      assert.equal(late.status, 400);
      assert.equal(late.body.error, 'invalid_request');
      const result = await readResult(id);
      assert.equal(result.status, 'verified');
      assert.equal(result.credentials.pid[0].claims.family_name, 'Lovelace');
    });

    test('a spoofed error and the genuine presentation at once: the request ends verified', async () => {
      for (let round = 0; round < 5; round++) {
        const { id, seen, link } = await opened();
        const request = await resolveRequest(link);
        const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
          aud: request.clientId,
          nonce: request.payload.nonce,
        });
        const [spoofed, genuine] = await Promise.all([
          postForm(seen.payload.response_uri, { error: 'access_denied', state: seen.payload.state }),
          answer(request, { pid: [presentation] }),
        ]);
        assert.equal(genuine.status, 200, JSON.stringify(genuine.body));
        // The spoofed error is taken (recorded, then replaced) or refused (after the verified one).
        assert.ok([200, 400].includes(spoofed.status));
        assert.equal((await readResult(id)).status, 'verified', `round ${round}`);
      }
    });
  });
}
