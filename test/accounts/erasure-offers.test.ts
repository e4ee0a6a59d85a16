// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startSecondInstance } from '../helpers/server.ts';
import { type IssuerWorld, requestCredential, startIssuerWorld } from '../issuer/issuer-helpers.ts';
import { codeFromOutbox } from '../oidc/flow-helpers.ts';

const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const VICTIM_CLAIMS = { given_name: 'Victoria', degree: 'PhD Astronomy' };
const WALLET = 'https://attacker.example';
const REDIRECT_URI = 'https://attacker.example/callback';

/**
 * A tenant's issuer made an offer for one of its accounts; the account is erased; someone holds
 * the offer's link (a forwarded e-mail, a photographed QR code). Nothing prepared for the erased
 * person may be issued to anyone afterwards.
 */
for (const kind of DATABASE_KINDS) {
  describe(`erasure cancels the account's offers (${kind})`, () => {
    let world: IssuerWorld;
    before(async () => {
      world = await startIssuerWorld(kind);
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['given_name'] }, { path: ['degree'] }],
      });
      assert.equal(put.status, 201, put.text);
    });
    after(() => world.close());

    async function account(name: string): Promise<number> {
      const created = await world.api('POST', '/v1/user/create', {
        profile: {
          email_address: `${name}.${randomBytes(4).toString('hex')}@example.org`,
          first_name: 'Victoria',
          last_name: 'Example',
        },
      });
      assert.equal(created.status, 201, created.text);
      return created.body.data.user_id;
    }

    async function offerFor(userId: number, grant: 'pre-authorized_code' | 'authorization_code') {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: VICTIM_CLAIMS },
        user_id: userId,
        grant,
      });
      assert.equal(offer.status, 201, offer.text);
      const document = (await (await fetch(offer.body.data.credential_offer_uri)).json()) as any;
      return {
        id: offer.body.data.id as string,
        uri: offer.body.data.credential_offer_uri as string,
        document,
      };
    }

    const erase = async (userId: number) => {
      const erased = await world.api('DELETE', `/v1/user/${userId}`);
      assert.equal(erased.status, 204, erased.text);
    };

    async function assertCancelled(offerId: string) {
      const tracking = await world.api('GET', `/v1/issuer/offers/${offerId}`);
      assert.equal(tracking.body.data.status, 'cancelled');
      assert.ok(tracking.body.data.events.some((e: any) => e.event === 'cancelled'));
      assert.deepEqual(tracking.body.data.credentials, []);
      const row = await world.server.database.db
        .selectFrom('issuer_offers')
        .select(['claims_sealed', 'deferred_sealed'])
        .where('id', '=', offerId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { claims_sealed: null, deferred_sealed: null }, 'the claims are deleted');
    }

    const pkce = () => {
      const verifier = randomBytes(32).toString('base64url');
      return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
    };
    const authorizeUrl = (issuerState: string, challenge: string) =>
      `${world.server.url}/v2/openidc/authorize?${new URLSearchParams({
        client_id: WALLET,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        issuer_state: issuerState,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })}`;

    it('an authorization-code offer: its link, its issuer_state and a log-in begun before all fail', async () => {
      const victim = await account('victim');
      const offer = await offerFor(victim, 'authorization_code');
      const issuerState = offer.document.grants.authorization_code.issuer_state;
      // The attacker starts before the erasure and finishes after it, with an account of their own.
      const { verifier, challenge } = pkce();
      const started = await fetch(authorizeUrl(issuerState, challenge), { redirect: 'manual' });
      assert.equal(started.status, 303);
      const interaction = started.headers.get('location')!;

      await erase(victim);

      assert.equal((await fetch(offer.uri)).status, 404, 'the offer by reference is gone');
      const again = await fetch(authorizeUrl(issuerState, pkce().challenge), { redirect: 'manual' });
      assert.equal(again.status, 400, 'its issuer_state names no live offer');

      const post = (step: string, body: unknown) =>
        fetch(`${world.server.url}${interaction}/${step}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const email = `attacker.${kind}@example.org`;
      assert.equal((await post('login/email', { email })).status, 202);
      const verified = await post('login/email/verify', { code: await codeFromOutbox(world.server, email) });
      const back = new URL(((await verified.json()) as any).redirect_to);
      const code = back.searchParams.get('code');
      assert.equal(code, null, `no code comes back: ${back}`);
      assert.equal(back.searchParams.get('error'), 'access_denied');
      // Even a code would be refused at the token endpoint; nothing of it is left to issue.
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: 'authorization_code',
          code: 'vci_whatever',
          client_id: WALLET,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
        },
      });
      assert.equal(token.status, 400);
      await assertCancelled(offer.id);
    });

    it('a pre-authorized offer: its code is refused after the erasure', async () => {
      const victim = await account('victim');
      const offer = await offerFor(victim, 'pre-authorized_code');
      await erase(victim);
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: PRE_AUTHORIZED,
          'pre-authorized_code': offer.document.grants[PRE_AUTHORIZED]['pre-authorized_code'],
        },
      });
      assert.equal(token.status, 400, token.text);
      assert.equal(token.body.error, 'invalid_grant');
      await assertCancelled(offer.id);
    });

    it('an offer redeemed but not issued when the account goes issues nothing', async () => {
      const victim = await account('victim');
      const offer = await offerFor(victim, 'pre-authorized_code');
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: PRE_AUTHORIZED,
          'pre-authorized_code': offer.document.grants[PRE_AUTHORIZED]['pre-authorized_code'],
        },
      });
      assert.equal(token.status, 200, token.text);
      await erase(victim);
      const answer = await requestCredential(world, token.body.access_token, 'degree');
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error, 'credential_request_denied');
      await assertCancelled(offer.id);
    });

    it('an offer that issued before the erasure stays issued; another account’s offer is untouched', async () => {
      const victim = await account('victim');
      const bystander = await account('bystander');
      const issued = await offerFor(victim, 'pre-authorized_code');
      const kept = await offerFor(bystander, 'pre-authorized_code');
      const token = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: PRE_AUTHORIZED,
          'pre-authorized_code': issued.document.grants[PRE_AUTHORIZED]['pre-authorized_code'],
        },
      });
      assert.equal((await requestCredential(world, token.body.access_token, 'degree')).status, 200);
      await erase(victim);
      assert.equal((await world.api('GET', `/v1/issuer/offers/${issued.id}`)).body.data.status, 'issued');
      assert.equal((await world.api('GET', `/v1/issuer/offers/${kept.id}`)).body.data.status, 'offered');
      assert.equal((await fetch(kept.uri)).status, 200);
    });

    it('an erasure racing a credential request on another instance: issued and kept, or cancelled and nothing issued', async () => {
      const second = await startSecondInstance(world.server);
      try {
        for (let round = 0; round < 6; round++) {
          const victim = await account('victim');
          const offer = await offerFor(victim, 'pre-authorized_code');
          const token = await world.server.request('POST', '/v2/openidc/token', {
            body: {
              grant_type: PRE_AUTHORIZED,
              'pre-authorized_code': offer.document.grants[PRE_AUTHORIZED]['pre-authorized_code'],
            },
          });
          const [answer, erased] = await Promise.all([
            requestCredential(world, token.body.access_token, 'degree'),
            second.request('DELETE', `/v1/user/${victim}`, { headers: { 'x-api-token': world.token } }),
          ]);
          assert.equal(erased.status, 204, erased.text);
          const tracking = await world.api('GET', `/v1/issuer/offers/${offer.id}`);
          const outcome = [answer.status, tracking.body.data.status, tracking.body.data.credentials.length];
          assert.ok(
            JSON.stringify(outcome) === JSON.stringify([200, 'issued', 1]) ||
              JSON.stringify(outcome) === JSON.stringify([400, 'cancelled', 0]),
            JSON.stringify(outcome),
          );
        }
      } finally {
        await second.close();
      }
    });

    it('an offer made for the account while it is erased on another instance is refused or cancelled', async () => {
      const second = await startSecondInstance(world.server);
      try {
        for (let round = 0; round < 8; round++) {
          const victim = await account('victim');
          const [made, erased] = await Promise.all([
            world.api('POST', '/v1/issuer/offers', {
              configuration_ids: ['degree'],
              claims: { degree: VICTIM_CLAIMS },
              user_id: victim,
            }),
            second.request('DELETE', `/v1/user/${victim}`, { headers: { 'x-api-token': world.token } }),
          ]);
          assert.equal(erased.status, 204, erased.text);
          if (made.status === 201) {
            const tracking = await world.api('GET', `/v1/issuer/offers/${made.body.data.id}`);
            assert.equal(tracking.body.data.status, 'cancelled', 'made first, then cancelled');
            assert.equal((await fetch(made.body.data.credential_offer_uri)).status, 404);
          } else {
            assert.deepEqual([made.status, made.body.error], [400, 'invalid_request'], made.text);
          }
        }
      } finally {
        await second.close();
      }
    });
  });
}
