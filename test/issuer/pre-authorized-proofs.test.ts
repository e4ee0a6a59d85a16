// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IssuerMetadataResult } from '@openid4vc/openid4vci';
import { CompactSign, SignJWT } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { sameKey, verifySdJwtVc } from './independent-checks.ts';
import { type InteropIssuer, refusalOf, startInteropIssuer } from './test-wallet.ts';

/**
 * What the issuer refuses of a wallet made of @openid4vc client code — proofs with a wrong
 * audience, a used nonce, a wrong typ, a signature by another key than the header names, two
 * copies on one key — and the batch, deferred and notification parts of the flow.
 */

const DEGREE = { given_name: 'Ada', degree: 'BSc Mathematics' };
const SD_JWT = {
  format: 'dc+sd-jwt',
  vct: 'https://example.edu/degree',
  claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
};

for (const kind of DATABASE_KINDS) {
  describe(`issuer interop: proofs, batches, deferred issuance, notifications (${kind})`, () => {
    let world: InteropIssuer;
    before(async () => {
      world = await startInteropIssuer(kind);
      for (const [id, configuration] of Object.entries({
        degree: SD_JWT,
        badge: { ...SD_JWT, vct: 'https://example.edu/badge', batch_size: 3 },
      })) {
        const put = await world.api('PUT', `/v1/issuer/configurations/${id}`, configuration);
        assert.equal(put.status, 201, put.text);
      }
    });
    after(() => world.close());

    /** An offer of `configurationId` redeemed by the wallet: its metadata and access token. */
    async function redeemed(configurationId: string, claims: Record<string, unknown> | null = DEGREE) {
      const offer = await world.offer({
        configuration_ids: [configurationId],
        ...(claims ? { claims: { [configurationId]: claims } } : {}),
      });
      const { offer: document, metadata } = await world.wallet.scan(offer.offer_link);
      const accessToken = await world.wallet.accessToken(document, metadata);
      return { offerId: offer.id, metadata, accessToken };
    }

    const tracking = async (offerId: string) =>
      (await world.api('GET', `/v1/issuer/offers/${offerId}`)).body.data;

    it('issues a configuration once when the wallet asks for it three times at once', async () => {
      const { offerId, metadata, accessToken } = await redeemed('degree');
      const wallet = world.wallet;
      const proofs = await Promise.all(
        [1, 2, 3].map(async () =>
          wallet.proof(metadata, 'degree', await wallet.newKey(), await wallet.nonce(metadata)),
        ),
      );
      const outcomes = await Promise.all(
        proofs.map((proof) =>
          wallet.credentials(metadata, accessToken, 'degree', [proof]).then(
            (issued) => ({ issued: issued.credentials?.length ?? 0 }),
            async (error: unknown) => await refusalOf(Promise.reject(error)),
          ),
        ),
      );
      assert.equal(
        outcomes.filter((o) => 'issued' in o && o.issued === 1).length,
        1,
        JSON.stringify(outcomes),
      );
      assert.deepEqual(
        outcomes.filter((o) => !('issued' in o)),
        [
          { status: 400, error: 'credential_request_denied' },
          { status: 400, error: 'credential_request_denied' },
        ],
      );
      const { credentials } = await tracking(offerId);
      assert.equal(credentials.length, 1, 'one credential recorded for the offer');
    });

    it('refuses proofs with a wrong aud, a used nonce, a wrong typ or a foreign signature', async () => {
      const { offerId, metadata, accessToken } = await redeemed('degree');
      const wallet = world.wallet;
      const key = await wallet.newKey();
      const send = (proof: string) => wallet.credentials(metadata, accessToken, 'degree', [proof]);

      // The library addresses its proof to the issuer its metadata names: another one here.
      const elsewhere: IssuerMetadataResult = {
        ...metadata,
        credentialIssuer: { ...metadata.credentialIssuer, credential_issuer: 'https://other.example' },
      };
      const wrongAud = await wallet.proof(elsewhere, 'degree', key, await wallet.nonce(metadata));
      assert.deepEqual(await refusalOf(send(wrongAud)), { status: 400, error: 'invalid_proof' });

      const bogusNonce = await wallet.proof(metadata, 'degree', key, 'not-a-nonce-of-this-issuer');
      assert.deepEqual(await refusalOf(send(bogusNonce)), { status: 400, error: 'invalid_nonce' });

      // The library's proofs are always well typed and signed: these two are made with jose.
      const nonce = await wallet.nonce(metadata);
      const claims = { aud: world.issuerId, nonce, iat: Math.floor(Date.now() / 1000) };
      const wrongTyp = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT', jwk: key.jwk })
        .sign(key.privateKey);
      assert.deepEqual(await refusalOf(send(wrongTyp)), { status: 400, error: 'invalid_proof' });
      const other = await wallet.newKey();
      const foreign = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
        .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.jwk })
        .sign(other.privateKey);
      assert.deepEqual(await refusalOf(send(foreign)), { status: 400, error: 'invalid_proof' });

      // None of them spent the token: a good proof gets the credential, and its replay does not.
      const good = await wallet.proof(metadata, 'degree', key, await wallet.nonce(metadata));
      const issued = await send(good);
      assert.equal(issued.credentials?.length, 1);
      assert.equal((await tracking(offerId)).status, 'issued');
      const replay = await refusalOf(send(good));
      assert.deepEqual(replay, { status: 400, error: 'credential_request_denied' }, 'not issued twice');
    });

    it('a proof replayed with the same token is refused: its nonce is used (invalid_nonce)', async () => {
      // One offer of two configurations: the token serves two credential requests.
      const offer = await world.offer({
        configuration_ids: ['degree', 'badge'],
        claims: { degree: DEGREE, badge: DEGREE },
      });
      const wallet = world.wallet;
      const { offer: document, metadata } = await wallet.scan(offer.offer_link);
      const accessToken = await wallet.accessToken(document, metadata);
      const key = await wallet.newKey();
      const proof = await wallet.proof(metadata, 'degree', key, await wallet.nonce(metadata));
      const first = await wallet.credentials(metadata, accessToken, 'degree', [proof]);
      assert.equal(first.credentials?.length, 1);
      const replay = await refusalOf(wallet.credentials(metadata, accessToken, 'badge', [proof]));
      assert.deepEqual(replay, { status: 400, error: 'invalid_nonce' });
      const fresh = await wallet.proof(metadata, 'badge', key, await wallet.nonce(metadata));
      const second = await wallet.credentials(metadata, accessToken, 'badge', [fresh]);
      assert.equal(second.credentials?.length, 1, 'the token was not spent by the replay');
    });

    it('a batch of three proofs gets three credentials, each bound to its own key', async () => {
      const offer = await world.offer({ configuration_ids: ['badge'], claims: { badge: DEGREE } });
      const { credentials, keys, metadata } = await world.wallet.receive(offer.offer_link, { copies: 3 });
      assert.equal(metadata.credentialIssuer.batch_credential_issuance?.batch_size, 3);
      assert.equal(credentials.length, 3);
      for (const [i, credential] of credentials.entries()) {
        const { payload } = await verifySdJwtVc(credential as string, world.ca, world.front.fetch);
        assert.ok(sameKey(keys[i]!.jwk, (payload['cnf'] as any).jwk), `copy ${i} is bound to key ${i}`);
        assert.equal(payload['given_name'], 'Ada');
      }
      const issued = await world.api('GET', `/v1/issuer/credentials?offer=${offer.id}`);
      assert.equal(issued.body.data.length, 3);
    });

    it("a wallet sending as many proofs as the issuer's batch_size is not refused for a smaller configuration", async () => {
      // The metadata's batch_size (3, from 'badge') is issuer-wide: a wallet may send that many
      // proofs for 'degree' too. It gets the copies 'degree' allows (one), on its first key.
      const offer = await world.offer({ configuration_ids: ['degree'], claims: { degree: DEGREE } });
      const { credentials, keys, metadata } = await world.wallet.receive(offer.offer_link, { copies: 3 });
      assert.equal(metadata.credentialIssuer.batch_credential_issuance?.batch_size, 3);
      assert.equal(credentials.length, 1);
      const { payload } = await verifySdJwtVc(credentials[0] as string, world.ca, world.front.fetch);
      assert.ok(sameKey(keys[0]!.jwk, (payload['cnf'] as any).jwk), 'bound to the first proof key');
    });

    it('two proofs by the same key are refused', async () => {
      const { metadata, accessToken } = await redeemed('badge');
      const key = await world.wallet.newKey();
      const nonce = await world.wallet.nonce(metadata);
      const proofs = [
        await world.wallet.proof(metadata, 'badge', key, nonce),
        await world.wallet.proof(metadata, 'badge', key, nonce),
      ];
      const refused = await refusalOf(world.wallet.credentials(metadata, accessToken, 'badge', proofs));
      assert.deepEqual(refused, { status: 400, error: 'invalid_proof' });
    });

    it('an offer without claims is deferred until the tenant gives them', async () => {
      const { offerId, metadata, accessToken } = await redeemed('degree', null);
      const wallet = world.wallet;
      const key = await wallet.newKey();
      const proof = await wallet.proof(metadata, 'degree', key, await wallet.nonce(metadata));
      const answer = await wallet.credentials(metadata, accessToken, 'degree', [proof]);
      assert.equal(answer.credentials, undefined);
      const transactionId = answer.transaction_id!;
      assert.equal(typeof transactionId, 'string');
      assert.equal((await tracking(offerId)).status, 'deferred');

      const pending = await refusalOf(wallet.deferred(metadata, accessToken, transactionId));
      assert.deepEqual(pending, { status: 400, error: 'issuance_pending' });

      const given = await world.api('PUT', `/v1/issuer/offers/${offerId}/claims`, {
        claims: { degree: DEGREE },
      });
      assert.equal(given.status, 200, given.text);
      const delivered = await wallet.deferred(metadata, accessToken, transactionId);
      assert.equal(delivered.credentials?.length, 1);
      const { payload } = await verifySdJwtVc(
        (delivered.credentials![0] as any).credential,
        world.ca,
        world.front.fetch,
      );
      assert.equal(payload['degree'], 'BSc Mathematics');
      assert.ok(sameKey(key.jwk, (payload['cnf'] as any).jwk), 'bound to the key proven at the request');
      assert.equal((await tracking(offerId)).status, 'issued');

      const again = await refusalOf(wallet.deferred(metadata, accessToken, transactionId));
      assert.deepEqual(again, { status: 400, error: 'invalid_transaction_id' });
      // The deferred answer's notification_id works as an immediate one does.
      await wallet.notify(metadata, accessToken, delivered.notification_id!, 'credential_accepted');
      assert.equal((await tracking(offerId)).status, 'accepted');
    });

    it('notifications show in the offer: credential_accepted, then credential_deleted', async () => {
      const offer = await world.offer({ configuration_ids: ['degree'], claims: { degree: DEGREE } });
      const { metadata, accessToken, response } = await world.wallet.receive(offer.offer_link);
      const unknown = await refusalOf(
        world.wallet.notify(metadata, accessToken, 'not-one-of-ours', 'credential_accepted'),
      );
      assert.deepEqual(unknown, { status: 400, error: 'invalid_notification_id' });
      const shown: [string, string][] = [
        ['offered', 'offered'],
        ['redeemed', 'redeemed'],
        ['issued', 'issued'],
      ];
      for (const [event, status] of [
        ['credential_accepted', 'accepted'],
        ['credential_deleted', 'deleted'],
      ] as const) {
        await world.wallet.notify(metadata, accessToken, response.notification_id!, event);
        const data = await tracking(offer.id);
        assert.equal(data.status, status);
        shown.push([event, status]);
        assert.deepEqual(
          data.events.map((e: any) => [e.event, e.status]),
          shown,
        );
      }
    });
  });
}
