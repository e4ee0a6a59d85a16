// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type SecondInstance, startSecondInstance } from '../helpers/server.ts';
import { type IssuerWorld, startIssuerWorld } from './issuer-helpers.ts';

const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

/**
 * The attacker holds the offer link (its pre-authorized code) but not the transaction code, and
 * sends many guesses at once across two instances. However the requests interleave, at most five
 * codes may ever be compared: five answers "wrong", or fewer and the right one.
 */
for (const kind of DATABASE_KINDS) {
  describe(`transaction codes guessed in a burst, across two instances (${kind})`, () => {
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

    async function offerWithTxCode() {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'BSc' } },
        tx_code: { length: 6 },
      });
      assert.equal(offer.status, 201, offer.text);
      const document = (await (await fetch(offer.body.data.credential_offer_uri)).json()) as any;
      return {
        id: offer.body.data.id as string,
        right: offer.body.data.tx_code as string,
        code: document.grants[PRE_AUTHORIZED]['pre-authorized_code'] as string,
      };
    }

    async function burst(wrongGuesses: number, rightAt: number) {
      const { id, right, code } = await offerWithTxCode();
      const guesses = Array.from({ length: wrongGuesses }, (_, i) => wrongCode(right, i));
      guesses.splice(rightAt, 0, right);
      const answers = await Promise.all(
        guesses.map((txCode, i) =>
          (i % 2 ? second.request : world.server.request)('POST', '/v2/openidc/token', {
            body: { grant_type: PRE_AUTHORIZED, 'pre-authorized_code': code, tx_code: txCode },
          }),
        ),
      );
      return { id, right, code, answers, guesses };
    }

    it('twenty wrong codes and the right one at once: at most five codes are compared', async () => {
      for (const rightAt of [0, 10, 20, 5, 15]) {
        const { id, right, code, answers, guesses } = await burst(20, rightAt);
        const granted = answers.filter((a) => a.status === 200);
        const wrong = answers.filter((a) =>
          /transaction code is wrong/.test(a.body?.error_description ?? ''),
        );
        for (const a of answers) {
          if (a.status !== 200) assert.deepEqual([a.status, a.body.error], [400, 'invalid_grant'], a.text);
        }
        assert.ok(granted.length <= 1, 'one token per offer');
        if (granted.length === 1) {
          assert.equal(guesses[answers.indexOf(granted[0]!)], right, 'only the right code is granted');
        }
        assert.ok(
          wrong.length + granted.length <= 5,
          `${wrong.length} codes answered wrong and ${granted.length} granted: more than five were compared`,
        );
        // Each wrong answer names a distinct count of tries left: none was counted twice.
        const left = wrong.map((a) => a.body.error_description);
        assert.equal(new Set(left).size, left.length, left.join(' | '));

        const tracking = await world.api('GET', `/v1/issuer/offers/${id}`);
        const failures = tracking.body.data.events.filter((e: any) => e.event.startsWith('tx_code_')).length;
        assert.equal(failures, wrong.length, 'one event per wrong code compared');
        if (granted.length === 0) {
          assert.equal(tracking.body.data.status, 'offered');
          assert.equal(wrong.length, 5, 'five tries were spent');
          const late = await world.server.request('POST', '/v2/openidc/token', {
            body: { grant_type: PRE_AUTHORIZED, 'pre-authorized_code': code, tx_code: right },
          });
          assert.equal(late.status, 400, 'the right code after five wrong ones is refused');
          assert.match(late.body.error_description, /Too many wrong transaction codes/);
        } else {
          assert.equal(tracking.body.data.status, 'redeemed');
        }
      }
    });

    it('a wrong try is spent only on the code: a malformed request costs none', async () => {
      const { right, code } = await offerWithTxCode();
      for (let i = 0; i < 6; i++) {
        const refused = await world.server.request('POST', '/v2/openidc/token', {
          body: {
            grant_type: PRE_AUTHORIZED,
            'pre-authorized_code': code,
            tx_code: right,
            authorization_details: [{ type: 'openid_credential', credential_configuration_id: 'other' }],
          },
        });
        assert.equal(refused.status, 400);
      }
      const granted = await second.request('POST', '/v2/openidc/token', {
        body: { grant_type: PRE_AUTHORIZED, 'pre-authorized_code': code, tx_code: right },
      });
      assert.equal(granted.status, 200, granted.text);
    });
  });
}

/** A code of the same length and digits that is not the right one. */
function wrongCode(code: string, salt: number): string {
  const n = (Number(code) + 1 + salt) % 10 ** code.length;
  return String(n).padStart(code.length, '0');
}
