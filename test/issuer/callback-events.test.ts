import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, errors, generateKeyPair, SignJWT } from 'jose';
import {
  type CallbackReceiver,
  startCallbackReceiver,
  verifyCallbackEvent,
} from '../helpers/callback-receiver.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { eventually } from '../verifier/verifier-helpers.ts';
import { type InteropIssuer, startInteropIssuer } from './test-wallet.ts';

const HOUR = 3600_000;

/**
 * Callback events are typed and short-lived (DESIGN.md, Rules at the edges; RFC 8725 §3.11): a
 * JWT of Coffer's OP key with `typ` coffer-event+jwt, so no other JWT of that key (an identity or
 * access token) passes for one, and an `exp` five minutes after `iat`, so a captured event is
 * worthless soon. A delivery retried an hour later is signed anew: fresh `iat` and `exp`, the
 * same `jti`, which lets the receiver drop a duplicate.
 */
for (const kind of DATABASE_KINDS) {
  describe(`callback events: typed, short-lived, signed anew at each attempt (${kind})`, () => {
    let world: InteropIssuer;
    let receiver: CallbackReceiver;
    let ahead = 0;
    const issuerNow = () => new Date(Date.now() + ahead);

    before(async () => {
      receiver = await startCallbackReceiver();
      world = await startInteropIssuer(kind, { trust: [receiver.ca.pem], issuerClock: issuerNow });
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['degree'] }],
      });
      assert.equal(put.status, 201, put.text);
    });
    after(async () => {
      await world?.close();
      await receiver?.close();
    });

    it('a retry an hour later carries a fresh iat and exp and the same jti; an old one is refused by the receiver', async () => {
      receiver.failNext = 1;
      const offer = await world.offer({
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'BSc' } },
        callback_url: receiver.url,
      });
      await eventually(() => receiver.received.length >= 1, 'the first attempt');
      ahead = HOUR;
      await eventually(() => receiver.received.length >= 2, 'the retry', 15_000);
      const [first, retry] = receiver.received.map((r) => r.body) as [string, string];
      const jwks = (await world.server.request('GET', '/.well-known/jwks.json')).body;
      const expected = { issuer: world.front.url, audience: String(world.clientId) };

      assert.equal(decodeProtectedHeader(first).typ, 'coffer-event+jwt');
      const a = await verifyCallbackEvent(first, jwks, {
        ...expected,
        currentDate: new Date(receiver.received[0]!.at),
      });
      const b = await verifyCallbackEvent(retry, jwks, {
        ...expected,
        currentDate: new Date(Date.now() + HOUR),
      });
      assert.equal(a['offer_id'], offer.id);
      assert.equal(b['jti'], a['jti'], 'the same event');
      assert.equal(a['exp']! - a['iat']!, 300);
      assert.equal(b['exp']! - b['iat']!, 300);
      assert.ok(b['iat']! - a['iat']! >= 3600, 'signed again at the retry');
      // The first signature is worthless by the time of the retry.
      await assert.rejects(
        verifyCallbackEvent(first, jwks, { ...expected, currentDate: new Date(Date.now() + HOUR) }),
        errors.JWTExpired,
      );
    });

    it('an event queued signed by an earlier version is delivered signed anew, typed and short-lived', async () => {
      ahead = 0;
      const offer = await world.offer({
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'BSc' } },
      });
      const old = await new SignJWT({ event: 'issued', offer_id: offer.id, status: 'issued' })
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
        .setIssuer(world.front.url)
        .setAudience(String(world.clientId))
        .setIssuedAt()
        .setJti('queued-before-the-upgrade')
        .sign((await generateKeyPair('ES256')).privateKey);
      const before = receiver.received.length;
      await world.server.database.db
        .insertInto('issuer_callbacks')
        .values({
          offer_id: offer.id,
          url: receiver.url,
          event: old,
          next_attempt_at: new Date().toISOString(),
        })
        .execute();
      await eventually(() => receiver.received.length > before, 'the queued event');
      const jwks = (await world.server.request('GET', '/.well-known/jwks.json')).body;
      const payload = await verifyCallbackEvent(receiver.received.at(-1)!.body, jwks, {
        issuer: world.front.url,
        audience: String(world.clientId),
      });
      assert.equal(payload['jti'], 'queued-before-the-upgrade');
      assert.equal(payload['offer_id'], offer.id);
    });

    it("a JWT of the same key that is not an event (an access token of the OP) fails the receiver's typ check", async () => {
      ahead = 0;
      const offer = await world.offer({
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'BSc' } },
      });
      const { accessToken } = await world.wallet.receive(offer.offer_link);
      const jwks = (await world.server.request('GET', '/.well-known/jwks.json')).body;
      await assert.rejects(
        verifyCallbackEvent(accessToken, jwks, { issuer: world.front.url, audience: String(world.clientId) }),
        errors.JWTClaimValidationFailed,
      );
    });
  });
}
