import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { checkVpToken } from './presentation-check.ts';
import { PERSON_TYPE, personQuery, type Transaction, type Verifier } from './verifier.ts';
import {
  approve,
  consentView,
  decide,
  issueTo,
  logInWithSiweInConsent,
  personWithCredential,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/** DCQL (OpenID4VP §6): which credentials and claims the wallet returns, checked by the verifier. */
const PASSPORT_QUERY = {
  id: 'passport',
  format: 'ldp_vc',
  meta: { type_values: [['https://issuer.example/vocab#PassportCredential']] },
  claims: [{ path: ['credentialSubject', 'first_name'] }],
};

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet DCQL, on ${kind}`, () => {
    let verifier: Verifier;
    let world: WalletWorld;
    let ada: Awaited<ReturnType<typeof personWithCredential>>;
    let second: Record<string, unknown>;

    before(async () => {
      world = await startWalletWorld(kind);
      verifier = world.verifier;
      ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      second = await issueTo(world, ada.did, {
        first_name: 'Augusta',
        last_name: 'King',
        date_of_birth: '1815-12-10',
        location: 'Ockham',
      });
    });
    // Optional chaining: when `before` failed, there may be nothing to close.
    after(async () => {
      await world?.close();
    });

    /** A request for the query, with Ada logged in at the consent. */
    const consentFor = async (dcql: object) => {
      const transaction = await verifier.createRequest({ dcql });
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      return { transaction, path, consent: await consentView(world.server, path) };
    };
    const expectation = (transaction: Transaction, claims: Record<string, string[][]>) => ({
      nonce: transaction.nonce,
      clientId: transaction.clientId,
      claims,
    });

    test('claim_sets: the first satisfiable set is disclosed, and only it', async () => {
      const query = {
        id: 'person',
        format: 'ldp_vc',
        meta: { type_values: [[PERSON_TYPE]] },
        claims: [
          { id: 'nickname', path: ['credentialSubject', 'claim_7'] },
          { id: 'first', path: ['credentialSubject', 'first_name'] },
          { id: 'last', path: ['credentialSubject', 'last_name'] },
        ],
        claim_sets: [['nickname'], ['first', 'last'], ['first']],
      };
      const { transaction, path, consent } = await consentFor({ credentials: [query] });
      assert.deepEqual(
        consent.requests[0].candidates[0].claims.map((c: { path: string[] }) => c.path[1]),
        ['first_name', 'last_name'],
      );
      const received = await approve(world.server, path, transaction, { person: ada.credentialId });
      const [checked] = await checkVpToken(
        received.vpToken,
        expectation(transaction, { person: [['first_name', 'last_name']] }),
      );
      assert.deepEqual(checked!.subject, { id: ada.did, first_name: 'Ada', last_name: 'Lovelace' });
    });

    test('without claims, only what every disclosure carries: the subject is just the holder', async () => {
      const { transaction, path } = await consentFor({ credentials: [personQuery('person', [])] });
      const received = await approve(world.server, path, transaction, { person: ada.credentialId });
      const [checked] = await checkVpToken(received.vpToken, expectation(transaction, { person: [[]] }));
      assert.deepEqual(checked!.subject, { id: ada.did });
    });

    test('validity and status are disclosed only when the query asks for them (§6.4.1)', async () => {
      // biome-ignore lint/suspicious/noExplicitAny: a presentation is arbitrary JSON-LD
      const credentialOf = (received: { vpToken: Record<string, unknown[]> | null }): any =>
        (received.vpToken!['person']![0] as { verifiableCredential: unknown[] }).verifiableCredential[0];
      const plain = await consentFor({ credentials: [personQuery('person', ['first_name'])] });
      const bare = credentialOf(
        await approve(world.server, plain.path, plain.transaction, { person: ada.credentialId }),
      );
      assert.equal(bare.validFrom, undefined);
      assert.ok(bare.issuer && bare.credentialSubject.id, 'issuer and subject: what verification needs');

      const asked = await consentFor({
        credentials: [
          {
            ...personQuery('person', ['first_name']),
            claims: [{ path: ['credentialSubject', 'first_name'] }, { path: ['validFrom'] }],
          },
        ],
      });
      const dated = credentialOf(
        await approve(world.server, asked.path, asked.transaction, { person: ada.credentialId }),
      );
      assert.equal(typeof dated.validFrom, 'string');
    });

    describe('credential_sets', () => {
      const dcql = {
        credentials: [
          PASSPORT_QUERY,
          personQuery('name', ['first_name']),
          personQuery('birth', ['date_of_birth']),
          personQuery('place', ['location']),
        ],
        credential_sets: [
          { options: [['passport'], ['name', 'birth']] },
          { required: false, options: [['place']] },
        ],
      };

      test('a required set gets its first satisfiable option; an optional set is left out unless chosen', async () => {
        const { transaction, path, consent } = await consentFor(dcql);
        assert.deepEqual(consent.credential_sets, [
          { required: true, options: [['passport'], ['name', 'birth']] },
          { required: false, options: [['place']] },
        ]);
        assert.equal(consent.satisfiable, true);
        const received = await approve(world.server, path, transaction);
        await checkVpToken(
          received.vpToken,
          expectation(transaction, { name: [['first_name']], birth: [['date_of_birth']] }),
        );
      });

      test('an optional set the person chooses is added', async () => {
        const { transaction, path } = await consentFor(dcql);
        const received = await approve(world.server, path, transaction, { place: ada.credentialId });
        const checked = await checkVpToken(
          received.vpToken,
          expectation(transaction, {
            name: [['first_name']],
            birth: [['date_of_birth']],
            place: [['location']],
          }),
        );
        assert.equal(checked.find((c) => c.queryId === 'place')!.subject['location'], 'London');
      });
    });

    test('multiple: true with two credentials selected gives two presentations', async () => {
      const { transaction, path, consent } = await consentFor({
        credentials: [personQuery('person', ['first_name'], { multiple: true })],
      });
      assert.equal(consent.requests[0].multiple, true);
      assert.equal(consent.requests[0].candidates.length, 2);
      const received = await approve(world.server, path, transaction, {
        person: [ada.credentialId, String(second['id'])],
      });
      const checked = await checkVpToken(
        received.vpToken,
        expectation(transaction, { person: [['first_name'], ['first_name']] }),
      );
      assert.deepEqual(checked.map((c) => c.subject['first_name']).sort(), ['Ada', 'Augusta']);
    });

    test('two credentials for a query without multiple → 400', async () => {
      const { transaction, path } = await consentFor({
        credentials: [personQuery('person', ['first_name'])],
      });
      const answer = await decide(world.server, path, {
        decision: 'approve',
        selections: { person: [ada.credentialId, String(second['id'])] },
      });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(transaction.received.length, 0);
    });

    test('selecting a credential that does not match the query → 400; the right one then works', async () => {
      const { transaction, path, consent } = await consentFor({
        credentials: [
          {
            ...personQuery('person', []),
            claims: [{ path: ['credentialSubject', 'first_name'], values: ['Ada'] }],
          },
        ],
      });
      assert.deepEqual(
        consent.requests[0].candidates.map((c: { credential_id: string }) => c.credential_id),
        [ada.credentialId],
      );
      const wrong = await decide(world.server, path, {
        decision: 'approve',
        selections: { person: String(second['id']) },
      });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.match(wrong.body.error_description, /does not match/);
      assert.equal(transaction.received.length, 0, 'nothing reaches the verifier');

      const received = await approve(world.server, path, transaction, { person: ada.credentialId });
      await checkVpToken(received.vpToken, expectation(transaction, { person: [['first_name']] }));
    });

    describe('holder binding of a credential issued to the did:pkh of the wallet', () => {
      let pkhCredentialId: string;
      let holder: Awaited<ReturnType<typeof logInUser>>;
      const account = privateKeyToAccount(generatePrivateKey());

      before(async () => {
        // did:pkh credentials are issued to users of the issuer's own tenants.
        const rp = await registerRelyingParty(world.server, world.issuerClientId);
        holder = await logInUser(world.server, rp, account);
        const subject = `did:pkh:eip155:1:${account.address}`;
        pkhCredentialId = String((await issueTo(world, subject, { first_name: 'Charles' }))['id']);
      });

      const consentOf = async (query: object) => {
        const transaction = await verifier.createRequest({ dcql: { credentials: [query] } });
        const path = await startConsent(world.server, transaction.query);
        await logInWithSiweInConsent(world.server, path, account);
        return { transaction, path, consent: await consentView(world.server, path) };
      };

      test('is not offered where holder binding is required: the holder key cannot prove it', async () => {
        const { consent } = await consentOf(personQuery('person', ['first_name']));
        assert.deepEqual(consent.requests[0].candidates, []);
        assert.equal(consent.satisfiable, false);
      });

      test('is presented as a derived credential where the verifier waives holder binding', async () => {
        const { transaction, path, consent } = await consentOf(
          personQuery('person', ['first_name'], { require_cryptographic_holder_binding: false }),
        );
        assert.deepEqual(
          consent.requests[0].candidates.map((c: { credential_id: string }) => c.credential_id),
          [pkhCredentialId],
        );
        const received = await approve(world.server, path, transaction);
        const [checked] = await checkVpToken(received.vpToken, {
          ...expectation(transaction, { person: [['first_name']] }),
          withoutHolderBinding: ['person'],
        });
        assert.equal(checked!.credentialId, pkhCredentialId);
        assert.equal(checked!.subject['id'], `did:pkh:eip155:1:${account.address}`);
        assert.notEqual(checked!.subject['id'], holder.did);
      });
    });

    test('a credential that expired after it was stored is no longer offered', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const holder = await personWithCredential(world, account);
      // Time enough to sign and store on a loaded machine (an expired credential is refused at store).
      const expiresAt = new Date(Date.now() + 4000);
      await issueTo(world, holder.did, undefined, { validUntil: expiresAt.toISOString() });
      await sleep(expiresAt.getTime() - Date.now() + 100);

      const transaction = await verifier.createRequest();
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, account);
      const consent = await consentView(world.server, path);
      assert.deepEqual(
        consent.requests[0].candidates.map((c: { credential_id: string }) => c.credential_id),
        [holder.credentialId],
      );
      const received = await approve(world.server, path, transaction);
      await checkVpToken(received.vpToken, expectation(transaction, { person: [['first_name']] }));
    });

    test('with values on an array wildcard, only the matching elements are disclosed', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const holder = await logInUser(world.server, world.rp, account);
      await issueTo(world, holder.did, { first_name: 'Ada', claim_1: ['DE', 'FR', 'US'] });
      const transaction = await verifier.createRequest({
        dcql: {
          credentials: [
            {
              ...personQuery('person', []),
              claims: [{ path: ['credentialSubject', 'claim_1', null], values: ['FR'] }],
            },
          ],
        },
      });
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, account);
      const consent = await consentView(world.server, path);
      assert.deepEqual(consent.requests[0].candidates[0].claims, [
        { path: ['credentialSubject', 'claim_1', null], values: ['FR'] },
      ]);
      const received = await approve(world.server, path, transaction);
      const [checked] = await checkVpToken(
        received.vpToken,
        expectation(transaction, { person: [['claim_1']] }),
      );
      assert.deepEqual([checked!.subject['claim_1']].flat(), ['FR'], 'DE and US are not disclosed');
    });

    test('a claims path into the proof matches nothing: the proof is not a claim', async () => {
      const { transaction, path, consent } = await consentFor({
        credentials: [
          {
            ...personQuery('person', []),
            claims: [{ path: ['proof', 'cryptosuite'], values: ['bbs-2023'] }],
          },
        ],
      });
      assert.equal(consent.satisfiable, false);
      assert.deepEqual(consent.requests[0].candidates, []);
      const approved = await decide(world.server, path, { decision: 'approve' });
      assert.equal(approved.status, 400, JSON.stringify(approved.body));
      assert.equal((await decide(world.server, path, { decision: 'decline' })).status, 200);
      assert.equal(transaction.received[0]?.error, 'access_denied');
    });

    test('a query nobody can satisfy: shown as such, approve is 400, decline sends access_denied', async () => {
      const { transaction, path, consent } = await consentFor({ credentials: [PASSPORT_QUERY] });
      assert.equal(consent.satisfiable, false);
      assert.match(consent.unsatisfiable_reason, /passport/);
      assert.deepEqual(consent.requests[0].candidates, []);
      const html = await (await fetch(world.server.url + path)).text();
      assert.match(html, /You cannot answer this request/);
      assert.doesNotMatch(html, /id="approve-button"/);

      const approved = await decide(world.server, path, { decision: 'approve' });
      assert.equal(approved.status, 400, JSON.stringify(approved.body));
      assert.equal(transaction.received.length, 0);

      const declined = await decide(world.server, path, { decision: 'decline' });
      assert.equal(declined.status, 200, JSON.stringify(declined.body));
      const [received] = transaction.received;
      assert.equal(received?.error, 'access_denied');
      assert.equal(received?.state, transaction.state);
      assert.equal(declined.body.redirect_to, received?.redirectUri);
    });
  });
}
