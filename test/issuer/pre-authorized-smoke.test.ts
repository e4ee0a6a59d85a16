// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type IssuerWorld, proofKey, startIssuerWorld } from './issuer-helpers.ts';

for (const kind of DATABASE_KINDS) {
  describe(`issuer, pre-authorized code (${kind})`, () => {
    let world: IssuerWorld;
    before(async () => {
      world = await startIssuerWorld(kind);
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
        status: true,
      });
      assert.equal(put.status, 201, put.text);
    });
    after(() => world.close());

    it('issues a credential through offer, token, nonce and credential request', async () => {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada', degree: 'BSc' } },
        tx_code: {},
      });
      assert.equal(offer.status, 201, offer.text);
      const created = offer.body.data;
      const byReference = await fetch(created.credential_offer_uri);
      assert.equal(byReference.status, 200);
      const document = (await byReference.json()) as any;
      const grant = document.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'];
      const tokenResponse = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': grant['pre-authorized_code'],
          tx_code: created.tx_code,
        },
      });
      assert.equal(tokenResponse.status, 200, tokenResponse.text);
      const nonce = await fetch(`${world.issuerId}/nonce`, { method: 'POST' });
      const { c_nonce } = (await nonce.json()) as { c_nonce: string };
      const key = await proofKey();
      const credential = await fetch(`${world.issuerId}/credential`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokenResponse.body.access_token}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          credential_configuration_id: 'degree',
          proofs: { jwt: [await key.proof({ aud: world.issuerId, nonce: c_nonce })] },
        }),
      });
      const body = (await credential.json()) as any;
      assert.equal(credential.status, 200, JSON.stringify(body));
      assert.equal(body.credentials.length, 1);
      const tracking = await world.api('GET', `/v1/issuer/offers/${created.id}`);
      assert.equal(tracking.body.data.status, 'issued');
      const listUri = tracking.body.data.credentials[0].status_list.uri;
      const list = await fetch(listUri);
      assert.equal(list.headers.get('content-type'), 'application/statuslist+jwt');
    });
  });
}
