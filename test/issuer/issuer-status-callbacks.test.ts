// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt } from 'jose';
import {
  type CallbackReceiver,
  startCallbackReceiver,
  verifyCallbackEvent,
} from '../helpers/callback-receiver.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { bitstringStatusOf, tokenStatusOf, verifySdJwtVc } from './independent-checks.ts';
import { type InteropIssuer, startInteropIssuer } from './test-wallet.ts';

/**
 * What the issuer tells others after issuing: its status lists, read by @sd-jwt/jwt-status-list
 * (Token Status List JWT) and by a Bitstring Status List decoder written here, before and after a
 * revocation; and the tenant's callback_url, which receives signed events a stock JOSE library
 * verifies against the server's JWKS.
 */

const DEGREE = { given_name: 'Ada', degree: 'BSc Mathematics' };
const CLAIMS = [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }];

for (const kind of DATABASE_KINDS) {
  describe(`issuer interop: status lists and callbacks (${kind})`, () => {
    let world: InteropIssuer;
    let receiver: CallbackReceiver;
    before(async () => {
      receiver = await startCallbackReceiver();
      world = await startInteropIssuer(kind, { trust: [receiver.ca.pem] });
      for (const [id, configuration] of Object.entries({
        'degree-sd': { format: 'dc+sd-jwt', vct: 'https://example.edu/degree', claims: CLAIMS, status: true },
        'degree-jwt': {
          format: 'jwt_vc_json',
          type: 'UniversityDegreeCredential',
          claims: CLAIMS.map((claim) => ({ ...claim, path: ['credentialSubject', ...claim.path] })),
          status: true,
        },
      })) {
        const put = await world.api('PUT', `/v1/issuer/configurations/${id}`, configuration);
        assert.equal(put.status, 201, put.text);
      }
    });
    after(async () => {
      await world.close();
      await receiver.close();
    });

    /** A credential of `configurationId` in the wallet, and its record in the tenant's API. */
    async function issued(configurationId: string) {
      const offer = await world.offer({
        configuration_ids: [configurationId],
        claims: {
          [configurationId]: configurationId === 'degree-jwt' ? { credentialSubject: DEGREE } : DEGREE,
        },
      });
      const { credentials } = await world.wallet.receive(offer.offer_link);
      const records = await world.api('GET', `/v1/issuer/credentials?offer=${offer.id}`);
      assert.equal(records.body.data.length, 1);
      return { credential: credentials[0] as string, record: records.body.data[0] };
    }

    const fetchList = async (uri: string, etag?: string) => {
      const response = await world.front.fetch(uri, etag ? { headers: { 'if-none-match': etag } } : {});
      return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
    };
    const setStatus = (id: string, status: string) =>
      world.api('POST', `/v1/issuer/credentials/${encodeURIComponent(id)}/status`, { status });

    it('dc+sd-jwt: the Token Status List shows it valid, suspended, then revoked for good', async () => {
      const { credential, record } = await issued('degree-sd');
      const { payload } = await verifySdJwtVc(credential, world.ca, world.front.fetch);
      const { uri, idx } = (payload['status'] as any).status_list;
      assert.deepEqual(
        record.status_list,
        { uri, index: idx },
        'the API names the entry the credential carries',
      );

      const before = await fetchList(uri);
      assert.equal(before.status, 200);
      assert.equal(await tokenStatusOf(before.body, world.ca, idx), 0, 'VALID');
      assert.equal((await fetchList(uri, before.etag!)).status, 304, 'unchanged: 304');

      assert.equal((await setStatus(record.id, 'suspended')).status, 200);
      const suspended = await fetchList(uri, before.etag!);
      assert.equal(suspended.status, 200, 'changed: the old ETag no longer matches');
      assert.notEqual(suspended.etag, before.etag);
      assert.equal(await tokenStatusOf(suspended.body, world.ca, idx), 2, 'SUSPENDED');

      assert.equal((await setStatus(record.id, 'valid')).status, 200);
      assert.equal(await tokenStatusOf((await fetchList(uri)).body, world.ca, idx), 0, 'reinstated');

      const revoked = await setStatus(record.id, 'revoked');
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal(revoked.body.data.status, 'revoked');
      const after = await fetchList(uri);
      assert.notEqual(after.etag, before.etag);
      assert.equal(await tokenStatusOf(after.body, world.ca, idx), 1, 'INVALID');
      await assert.rejects(
        verifySdJwtVc(credential, world.ca, world.front.fetch),
        /status/i,
        'a stock verifier now refuses it',
      );

      for (const status of ['valid', 'suspended']) {
        const refused = await setStatus(record.id, status);
        assert.equal(refused.status, 409, `revoked is final (${status})`);
      }
      assert.equal(await tokenStatusOf((await fetchList(uri)).body, world.ca, idx), 1);
    });

    it('jwt_vc_json: the Bitstring Status List bit is 0, then 1 once revoked', async () => {
      const { credential, record } = await issued('degree-jwt');
      const entry = (decodeJwt(credential)['vc'] as any).credentialStatus;
      assert.equal(entry.type, 'BitstringStatusListEntry');
      assert.equal(entry.statusPurpose, 'revocation');
      const uri = entry.statusListCredential;
      const index = Number(entry.statusListIndex);
      assert.deepEqual(record.status_list, { uri, index });

      const before = await fetchList(uri);
      assert.equal(await bitstringStatusOf(before.body, world.ca, index), 0);
      assert.equal((await setStatus(record.id, 'revoked')).status, 200);
      const after = await fetchList(uri);
      assert.notEqual(after.etag, before.etag);
      assert.equal(await bitstringStatusOf(after.body, world.ca, index), 1);
      assert.equal((await setStatus(record.id, 'valid')).status, 409, 'revoked is final');
    });

    it("the callback_url receives signed events, verified with the server's JWKS, without claims", async () => {
      const offer = await world.offer({
        configuration_ids: ['degree-sd'],
        claims: { 'degree-sd': DEGREE },
        callback_url: receiver.url,
      });
      const { metadata, accessToken, response } = await world.wallet.receive(offer.offer_link);
      await world.wallet.notify(metadata, accessToken, response.notification_id!, 'credential_accepted');

      const expected = ['offered', 'redeemed', 'issued', 'credential_accepted'];
      for (let i = 0; i < 100 && receiver.received.length < expected.length; i++) await sleep(100);
      assert.equal(receiver.received.length, expected.length, 'one event per status change');

      const jwks = await world.server.request('GET', '/.well-known/jwks.json');
      assert.equal(jwks.status, 200);
      const events = [];
      for (const { contentType, body } of receiver.received) {
        assert.equal(contentType, 'application/jwt');
        const payload = await verifyCallbackEvent(body, jwks.body, {
          audience: String(world.clientId),
          issuer: world.front.url,
        });
        assert.equal(payload['offer_id'], offer.id);
        assert.deepEqual(
          Object.keys(payload).sort(),
          ['aud', 'event', 'exp', 'iat', 'iss', 'jti', 'offer_id', 'status'],
          'no claims inside',
        );
        assert.ok(!body.includes('Ada') && !JSON.stringify(payload).includes('BSc'));
        events.push([payload['event'], payload['status']]);
      }
      assert.deepEqual(events.map(([event]) => event).sort(), [...expected].sort());
      assert.deepEqual(
        events.find(([event]) => event === 'credential_accepted'),
        ['credential_accepted', 'accepted'],
      );
    });
  });
}
