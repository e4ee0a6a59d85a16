import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import {
  type CallbackReceiver,
  startCallbackReceiver,
  verifyCallbackEvent,
} from '../helpers/callback-receiver.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer } from './test-wallet.ts';
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
 * The tenant's callback_url: a real HTTPS receiver under a CA of its own (trusted by the server's
 * outbound client), which gets one signed event (application/jwt) per status change. Each event
 * verifies with jose against the server's published JWKS, is addressed to the tenant's client id
 * and carries no claim.
 */

for (const kind of DATABASE_KINDS) {
  describe(`verifier: callbacks, on ${kind}`, () => {
    let receiver: CallbackReceiver;
    let world: VerifierWorld;

    before(async () => {
      receiver = await startCallbackReceiver();
      world = await startVerifierWorld(kind, {}, { trust: [receiver.ca.pem] });
    });
    after(async () => {
      await world?.close();
      await receiver?.close();
    });

    test('one signed event per status change (retrieved, verified), verifiable with the JWKS, addressed to the tenant, without claims', async () => {
      const holder = await generateKeyPair('ES256', { extractable: true });
      const credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
      const { created, request } = await openRequest(world, {
        dcql_query: sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]),
        callback_url: receiver.url,
      });
      await eventually(() => receiver.received.length >= 1, 'the retrieved event');
      const presentation = await presentSdJwt(credential, { given_name: true, family_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      assert.equal((await answer(request, { pid: [presentation] })).status, 200);
      assert.equal((await resultOf(world, created.id)).status, 'verified');
      await eventually(() => receiver.received.length >= 2, 'the verified event');

      const jwks = await world.server.request('GET', '/.well-known/jwks.json');
      assert.equal(jwks.status, 200);
      const events = [];
      for (const { contentType, body } of receiver.received) {
        assert.equal(contentType, 'application/jwt');
        const payload = await verifyCallbackEvent(body, jwks.body, {
          issuer: world.front.url,
          audience: String(world.clientId),
        });
        assert.deepEqual(Object.keys(payload).sort(), [
          'aud',
          'event',
          'exp',
          'iat',
          'iss',
          'jti',
          'request_id',
          'status',
        ]);
        assert.doesNotMatch(JSON.stringify(payload), /Ada|Lovelace/);
        events.push({
          event: payload['event'],
          request_id: payload['request_id'],
          status: payload['status'],
        });
      }
      assert.deepEqual(events, [
        { event: 'verifier_request_status', request_id: created.id, status: 'retrieved' },
        { event: 'verifier_request_status', request_id: created.id, status: 'verified' },
      ]);
      const pending = await world.server.database.db.selectFrom('verifier_callbacks').selectAll().execute();
      assert.deepEqual(pending, [], 'each event was delivered once and nothing is left to send');
    });
  });
}
