// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type SecondInstance, startSecondInstance } from '../helpers/server.ts';
import {
  type IssuerWorld,
  preAuthorizedCodeOf,
  redeemPreAuthorizedCode,
  requestCredential,
  startIssuerWorld,
} from './issuer-helpers.ts';

/**
 * The Notification Endpoint (OpenID4VCI §11) follows the issuance once: a wallet — or whoever
 * holds its access token — cannot rewrite what became of a credential, nor make the tenant's
 * callback fire again and again.
 */
for (const kind of DATABASE_KINDS) {
  describe(`issuer notifications, once and forward (${kind})`, () => {
    let world: IssuerWorld;
    let second: SecondInstance;
    before(async () => {
      world = await startIssuerWorld(kind);
      second = await startSecondInstance(world.server);
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['degree'] }],
      });
      assert.equal(put.status, 201, put.text);
    });
    after(async () => {
      await second?.close();
      await world?.close();
    });

    /** One issuance by pre-authorized code; a callback URL nobody answers keeps its queue visible. */
    async function issued() {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'BSc' } },
        callback_url: 'https://127.0.0.1:9/events',
      });
      assert.equal(offer.status, 201, offer.text);
      const token = await redeemPreAuthorizedCode(world, await preAuthorizedCodeOf(offer.body.data));
      const { status, body } = await requestCredential(world, token.body.access_token, 'degree');
      assert.equal(status, 200, JSON.stringify(body));
      return {
        offerId: offer.body.data.id as string,
        accessToken: token.body.access_token as string,
        notificationId: body.notification_id as string,
      };
    }

    const notify = (
      at: { url: string },
      issuance: { accessToken: string; notificationId: string },
      event: string,
    ) =>
      fetch(`${at.url}/issuers/${world.clientId}/notification`, {
        method: 'POST',
        headers: { authorization: `Bearer ${issuance.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ notification_id: issuance.notificationId, event }),
      }).then(async (r) => ({ status: r.status, body: r.status === 204 ? null : ((await r.json()) as any) }));

    async function trail(offerId: string) {
      const tracking = await world.api('GET', `/v1/issuer/offers/${offerId}`);
      const callbacks = await world.server.database.db
        .selectFrom('issuer_callbacks')
        .select('event')
        .where('offer_id', '=', offerId)
        .execute();
      return {
        status: tracking.body.data.status as string,
        events: tracking.body.data.events.map((e: any) => e.event) as string[],
        callbacks: callbacks.length,
      };
    }

    it('accepted, a repeat, a failure after it, deleted, then anything: each change once, the rest refused', async () => {
      const issuance = await issued();
      const steps: [string, number, string][] = [
        ['credential_accepted', 204, 'accepted'],
        ['credential_accepted', 204, 'accepted'],
        ['credential_failure', 400, 'accepted'],
        ['credential_deleted', 204, 'deleted'],
        ['credential_deleted', 204, 'deleted'],
        ['credential_accepted', 400, 'deleted'],
        ['credential_failure', 400, 'deleted'],
      ];
      for (const [event, status, offerStatus] of steps) {
        const answer = await notify(world.server, issuance, event);
        assert.equal(answer.status, status, `${event}: ${JSON.stringify(answer.body)}`);
        if (status === 400) assert.equal(answer.body.error, 'invalid_notification_id');
        assert.equal((await trail(issuance.offerId)).status, offerStatus, event);
      }
      const { events, callbacks } = await trail(issuance.offerId);
      assert.deepEqual(events, [
        'offered',
        'redeemed',
        'issued',
        'credential_accepted',
        'credential_deleted',
      ]);
      assert.equal(callbacks, events.length, 'one callback per change, none for a repeat or a refusal');
    });

    it('a failure is final: nothing follows it', async () => {
      const issuance = await issued();
      assert.equal((await notify(world.server, issuance, 'credential_failure')).status, 204);
      for (const event of ['credential_accepted', 'credential_deleted']) {
        assert.equal((await notify(world.server, issuance, event)).status, 400, event);
      }
      assert.equal((await trail(issuance.offerId)).status, 'failed');
    });

    it('ten identical notifications at once on two instances: one change, one callback', async () => {
      const issuance = await issued();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          notify(i % 2 ? second : world.server, issuance, 'credential_accepted'),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(10).fill(204),
      );
      const { events, callbacks } = await trail(issuance.offerId);
      assert.equal(events.filter((e) => e === 'credential_accepted').length, 1);
      assert.equal(callbacks, events.length);
    });

    it('accepted and failure at once: one wins, the other is refused, the offer says which', async () => {
      for (let round = 0; round < 4; round++) {
        const issuance = await issued();
        const [accepted, failed] = await Promise.all([
          notify(world.server, issuance, 'credential_accepted'),
          notify(second, issuance, 'credential_failure'),
        ]);
        assert.deepEqual([accepted.status, failed.status].sort(), [204, 400]);
        const { status, events } = await trail(issuance.offerId);
        assert.equal(status, accepted.status === 204 ? 'accepted' : 'failed');
        assert.equal(events.filter((e) => e.startsWith('credential_')).length, 1);
      }
    });
  });
}
