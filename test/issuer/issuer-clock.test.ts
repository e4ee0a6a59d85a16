// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type InteropIssuer, refusalOf, startInteropIssuer } from './test-wallet.ts';

/**
 * What the issuer refuses once time has passed — an expired c_nonce, a key proof too old or
 * from the future, an expired issuance access token, an expired offer — with the issuer's clock
 * moved by the test (AppContext.issuerClock), never by waiting. The wallet is @openid4vc client
 * code; proofs whose iat the test chooses are made with jose.
 */

const DEGREE = { given_name: 'Ada', degree: 'BSc Mathematics' };
const SD_JWT = {
  format: 'dc+sd-jwt',
  vct: 'https://example.edu/degree',
  claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
};
const MINUTE = 60_000;

for (const kind of DATABASE_KINDS) {
  describe(`issuer clock: expiry of nonces, proofs, tokens and offers (${kind})`, () => {
    let world: InteropIssuer;
    /** How far the issuer's clock is ahead of the real one. */
    let ahead = 0;
    const issuerNow = () => new Date(Date.now() + ahead);
    const issuerSeconds = () => Math.floor(issuerNow().getTime() / 1000);

    before(async () => {
      world = await startInteropIssuer(kind, { issuerClock: issuerNow });
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', SD_JWT);
      assert.equal(put.status, 201, put.text);
    });
    afterEach(() => {
      ahead = 0;
    });
    after(() => world.close());

    async function redeemed() {
      const offer = await world.offer({ configuration_ids: ['degree'], claims: { degree: DEGREE } });
      const { offer: document, metadata } = await world.wallet.scan(offer.offer_link);
      const accessToken = await world.wallet.accessToken(document, metadata);
      return { offerId: offer.id, metadata, accessToken };
    }
    /** A jwt key proof with the iat the test chooses, by a fresh wallet key. */
    async function proofAt(iat: number, nonce: string) {
      const key = await world.wallet.newKey();
      return new SignJWT({ aud: world.issuerId, nonce, iat })
        .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.jwk })
        .sign(key.privateKey);
    }
    const tracking = async (offerId: string) =>
      (await world.api('GET', `/v1/issuer/offers/${offerId}`)).body.data;

    it('a c_nonce older than its five minutes is refused with invalid_nonce; a fresh one is taken', async () => {
      const { offerId, metadata, accessToken } = await redeemed();
      const stale = await world.wallet.nonce(metadata);
      ahead = 5 * MINUTE + 5_000;
      const refused = await refusalOf(
        world.wallet.credentials(metadata, accessToken, 'degree', [await proofAt(issuerSeconds(), stale)]),
      );
      assert.deepEqual(refused, { status: 400, error: 'invalid_nonce' });
      assert.equal((await tracking(offerId)).status, 'redeemed', 'nothing issued');

      const fresh = await world.wallet.nonce(metadata);
      const response = await world.wallet.credentials(metadata, accessToken, 'degree', [
        await proofAt(issuerSeconds(), fresh),
      ]);
      assert.equal(response.credentials?.length, 1);
      assert.equal((await tracking(offerId)).status, 'issued');
    });

    it('a proof whose iat is over five minutes old or over a minute ahead is invalid_proof; inside the window it is taken', async () => {
      const { offerId, metadata, accessToken } = await redeemed();
      const send = async (iat: number) =>
        world.wallet.credentials(metadata, accessToken, 'degree', [
          await proofAt(iat, await world.wallet.nonce(metadata)),
        ]);
      ahead = 2 * MINUTE;
      const now = issuerSeconds();
      assert.deepEqual(await refusalOf(send(now - 5 * 60 - 10)), { status: 400, error: 'invalid_proof' });
      assert.deepEqual(await refusalOf(send(now + 75)), { status: 400, error: 'invalid_proof' });
      assert.equal((await tracking(offerId)).status, 'redeemed', 'nothing issued');
      // Made by the wallet's own (real) clock, two minutes behind the issuer's: within five minutes.
      const taken = await send(Math.floor(Date.now() / 1000));
      assert.equal(taken.credentials?.length, 1);
      assert.equal((await tracking(offerId)).status, 'issued');
    });

    it('a proof up to a minute ahead of the issuer is taken (clock skew)', async () => {
      const { metadata, accessToken } = await redeemed();
      const response = await world.wallet.credentials(metadata, accessToken, 'degree', [
        await proofAt(issuerSeconds() + 45, await world.wallet.nonce(metadata)),
      ]);
      assert.equal(response.credentials?.length, 1);
    });

    it('an issuance access token past its 15 minutes is invalid_token at the credential and notification endpoints', async () => {
      const { offerId, metadata, accessToken } = await redeemed();
      ahead = 15 * MINUTE + 5_000;
      const nonce = await world.wallet.nonce(metadata);
      const refused = await refusalOf(
        world.wallet.credentials(metadata, accessToken, 'degree', [await proofAt(issuerSeconds(), nonce)]),
      );
      assert.deepEqual(refused, { status: 401, error: 'invalid_token' });
      const raw = await world.front.fetch(`${world.issuerId}/credential`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ credential_configuration_id: 'degree', proofs: { jwt: ['x'] } }),
      });
      assert.equal(raw.status, 401);
      assert.match(raw.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      const notified = await refusalOf(
        world.wallet.notify(metadata, accessToken, 'some-notification', 'credential_accepted'),
      );
      assert.deepEqual(notified, { status: 401, error: 'invalid_token' });
      ahead = 0;
      assert.equal((await tracking(offerId)).status, 'redeemed');
    });

    it('an expired offer: its page and credential_offer_uri are 404, its pre-authorized code invalid_grant, the API says expired', async () => {
      const offer = await world.offer({
        configuration_ids: ['degree'],
        claims: { degree: DEGREE },
        expires_in: 600,
      });
      const { offer: document, metadata } = await world.wallet.scan(offer.offer_link);
      const page = `${world.server.env['PUBLIC_URL']}/offer/${offer.id}`;
      assert.equal((await world.front.fetch(page)).status, 200, 'live: the page shows');
      assert.equal((await world.front.fetch(offer.credential_offer_uri)).status, 200);

      ahead = 10 * MINUTE + 5_000;
      assert.equal((await world.front.fetch(page)).status, 404);
      const byReference = await world.front.fetch(offer.credential_offer_uri);
      assert.equal(byReference.status, 404);
      assert.equal(((await byReference.json()) as any).error, 'not_found');
      await assert.rejects(
        world.wallet.scan(offer.offer_link),
        /status '404'/,
        'the wallet cannot resolve it',
      );
      assert.deepEqual(await refusalOf(world.wallet.accessToken(document, metadata)), {
        status: 400,
        error: 'invalid_grant',
      });
      assert.equal((await tracking(offer.id)).status, 'expired');

      ahead = 9 * MINUTE; // before its expiry the same code is redeemed
      await world.wallet.accessToken(document, metadata);
      assert.equal((await tracking(offer.id)).status, 'redeemed');
    });

    it('credential_failure makes the offer "failed"; an unknown event is invalid_notification_request', async () => {
      const offer = await world.offer({ configuration_ids: ['degree'], claims: { degree: DEGREE } });
      const { metadata, accessToken, response } = await world.wallet.receive(offer.offer_link);
      const notificationId = response.notification_id!;
      const raw = await world.front.fetch(`${world.issuerId}/notification`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ notification_id: notificationId, event: 'credential_lost' }),
      });
      assert.equal(raw.status, 400);
      assert.equal(((await raw.json()) as any).error, 'invalid_notification_request');
      assert.equal((await tracking(offer.id)).status, 'issued', 'an unknown event changes nothing');
      for (const malformed of [{ notification_id: notificationId }, { event: 'credential_failure' }]) {
        const refused = await world.front.fetch(`${world.issuerId}/notification`, {
          method: 'POST',
          headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(malformed),
        });
        assert.equal(refused.status, 400);
        assert.equal(
          ((await refused.json()) as any).error,
          'invalid_notification_request',
          'a missing parameter',
        );
      }

      await world.wallet.notify(metadata, accessToken, notificationId, 'credential_failure');
      const data = await tracking(offer.id);
      assert.equal(data.status, 'failed');
      assert.deepEqual(data.events.at(-1) && [data.events.at(-1).event, data.events.at(-1).status], [
        'credential_failure',
        'failed',
      ]);
    });
  });
}
