// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import {
  deriveAndVerifyLdpVc,
  sameKey,
  verifyMdoc,
  verifySdJwtVc,
  verifyVcJwt,
} from './independent-checks.ts';
import { type InteropIssuer, refusalOf, startInteropIssuer } from './test-wallet.ts';

/**
 * The issuer's pre-authorized code flow with a wallet that is other people's code
 * (@openid4vc/openid4vci's client), every format, each credential checked by a verifier
 * Coffer does not share: @sd-jwt/sd-jwt-vc, @owf/mdoc, jose, the Digital Bazaar stack.
 */

const MDL = 'org.iso.18013.5.1.mDL';
const MDL_NS = 'org.iso.18013.5.1';

export const CONFIGURATIONS: Record<string, Record<string, unknown>> = {
  'degree-sd': {
    format: 'dc+sd-jwt',
    vct: 'https://example.edu/degree',
    claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
    status: true,
  },
  mdl: {
    format: 'mso_mdoc',
    doctype: MDL,
    claims: [{ path: [MDL_NS, 'given_name'], mandatory: true }, { path: [MDL_NS, 'age_over_18'] }],
    status: true,
  },
  'degree-jwt': {
    format: 'jwt_vc_json',
    type: 'UniversityDegreeCredential',
    claims: [
      { path: ['credentialSubject', 'given_name'], mandatory: true },
      { path: ['credentialSubject', 'degree'] },
    ],
    status: true,
  },
  'degree-ldp': {
    format: 'ldp_vc',
    type: 'UniversityDegreeCredential',
    claims: [
      { path: ['credentialSubject', 'given_name'], mandatory: true },
      { path: ['credentialSubject', 'degree'] },
    ],
    status: true,
  },
};

const DEGREE = { given_name: 'Ada', degree: 'BSc Mathematics' };
// Claims as each credential addresses them: W3C ones under credentialSubject.
const CLAIMS: Record<string, Record<string, unknown>> = {
  'degree-sd': DEGREE,
  mdl: { [MDL_NS]: { given_name: 'Ada', age_over_18: true } },
  'degree-jwt': { credentialSubject: DEGREE },
  'degree-ldp': { credentialSubject: DEGREE },
};

for (const kind of DATABASE_KINDS) {
  describe(`issuer interop: pre-authorized code, every format (${kind})`, () => {
    let world: InteropIssuer;
    before(async () => {
      world = await startInteropIssuer(kind);
      for (const [id, configuration] of Object.entries(CONFIGURATIONS)) {
        const put = await world.api('PUT', `/v1/issuer/configurations/${id}`, configuration);
        assert.equal(put.status, 201, put.text);
      }
    });
    after(() => world.close());

    async function received(configurationId: string, withTxCode: boolean) {
      const offer = await world.offer({
        configuration_ids: [configurationId],
        claims: { [configurationId]: CLAIMS[configurationId] },
        ...(withTxCode ? { tx_code: { length: 6 } } : {}),
      });
      assert.equal(offer.tx_code !== undefined, withTxCode);
      const got = await world.wallet.receive(offer.offer_link, {
        ...(offer.tx_code ? { txCode: offer.tx_code } : {}),
      });
      const grant = got.offer.grants?.['urn:ietf:params:oauth:grant-type:pre-authorized_code'];
      if (withTxCode) assert.deepEqual(grant?.tx_code, { length: 6, input_mode: 'numeric' });
      else assert.equal(grant?.tx_code, undefined);
      assert.equal(got.credentials.length, 1);
      assert.equal(typeof got.response.notification_id, 'string');
      const tracking = await world.api('GET', `/v1/issuer/offers/${offer.id}`);
      assert.equal(tracking.body.data.status, 'issued');
      return { ...got, credential: got.credentials[0] as any, offerId: offer.id };
    }

    for (const withTxCode of [false, true]) {
      const how = withTxCode ? 'with a tx_code' : 'without a tx_code';

      it(`dc+sd-jwt ${how}: @sd-jwt/sd-jwt-vc verifies it against the CA, bound to the proof key`, async () => {
        const { credential, keys } = await received('degree-sd', withTxCode);
        const { header, payload } = await verifySdJwtVc(credential, world.ca, world.front.fetch);
        assert.equal(header?.['typ'], 'dc+sd-jwt');
        assert.equal(payload['iss'], world.issuerId);
        assert.equal(payload['vct'], 'https://example.edu/degree');
        assert.equal(payload['given_name'], 'Ada');
        assert.equal(payload['degree'], 'BSc Mathematics');
        assert.ok(sameKey(keys[0]!.jwk, (payload['cnf'] as any).jwk), 'cnf.jwk is the proof key');
      });

      it(`mso_mdoc ${how}: @owf/mdoc verifies it, its device key the proof key`, async () => {
        const { credential, keys } = await received('mdl', withTxCode);
        const mdoc = await verifyMdoc(credential, world.ca);
        assert.equal(mdoc.docType, MDL);
        assert.ok(sameKey(keys[0]!.jwk, mdoc.deviceKey), 'deviceKey is the proof key');
        assert.deepEqual(mdoc.elements.get(MDL_NS), { given_name: 'Ada', age_over_18: true });
      });

      it(`jwt_vc_json ${how}: jose verifies it with the x5c leaf`, async () => {
        const { credential, keys } = await received('degree-jwt', withTxCode);
        const { payload, protectedHeader } = await verifyVcJwt(credential, world.ca);
        assert.equal(protectedHeader.alg, 'ES256');
        const subject = (payload['vc'] as any)?.credentialSubject ?? payload['credentialSubject'];
        assert.equal(subject.given_name, 'Ada');
        const did = String(payload['sub'] ?? subject.id);
        assert.match(did, /^did:jwk:/);
        const bound = JSON.parse(Buffer.from(did.slice('did:jwk:'.length), 'base64url').toString());
        assert.ok(sameKey(keys[0]!.jwk, bound), 'the subject is the proof key');
      });

      it(`ldp_vc ${how}: the stock Digital Bazaar stack derives a proof and verifies it`, async () => {
        const { credential, keys } = await received('degree-ldp', withTxCode);
        const { derived, result, statusEntries } = await deriveAndVerifyLdpVc(credential, [
          '/credentialSubject/given_name',
        ]);
        assert.equal(result.verified, true, JSON.stringify(result.error ?? result.results, null, 1));
        assert.equal(derived.credentialSubject.given_name, 'Ada');
        assert.equal(derived.credentialSubject.degree, undefined, 'only what was disclosed');
        const did = String(derived.credentialSubject.id);
        const bound = JSON.parse(Buffer.from(did.slice('did:jwk:'.length), 'base64url').toString());
        assert.ok(sameKey(keys[0]!.jwk, bound), 'the subject is the proof key');
        assert.equal((statusEntries[0] as any)?.type, 'BitstringStatusListEntry');
      });
    }

    it('a tx_code that is wrong or missing is refused; the offer stays unspent', async () => {
      const offer = await world.offer({
        configuration_ids: ['degree-sd'],
        claims: { 'degree-sd': DEGREE },
        tx_code: {},
      });
      const { offer: document, metadata } = await world.wallet.scan(offer.offer_link);
      // The library will not send a token request without the code the offer asks for: raw HTTP.
      const grant = document.grants?.['urn:ietf:params:oauth:grant-type:pre-authorized_code'];
      const missing = await world.server.request('POST', '/v2/openidc/token', {
        body: {
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': grant?.['pre-authorized_code'],
        },
      });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'invalid_request');
      const wrong = await refusalOf(world.wallet.accessToken(document, metadata, wrongCode(offer.tx_code!)));
      assert.deepEqual(wrong, { status: 400, error: 'invalid_grant' });
      const token = await world.wallet.accessToken(document, metadata, offer.tx_code);
      assert.equal(typeof token, 'string', 'the right code still works');
    });

    it('five wrong tx_codes lock the offer: the right one is then refused too', async () => {
      const offer = await world.offer({
        configuration_ids: ['degree-sd'],
        claims: { 'degree-sd': DEGREE },
        tx_code: {},
      });
      const { offer: document, metadata } = await world.wallet.scan(offer.offer_link);
      for (let i = 0; i < 5; i++) {
        const wrong = await refusalOf(
          world.wallet.accessToken(document, metadata, wrongCode(offer.tx_code!, i)),
        );
        assert.equal(wrong.error, 'invalid_grant', `try ${i + 1}`);
      }
      const right = await refusalOf(world.wallet.accessToken(document, metadata, offer.tx_code));
      assert.equal(right.error, 'invalid_grant');
      const tracking = await world.api('GET', `/v1/issuer/offers/${offer.id}`);
      assert.equal(tracking.body.data.status, 'offered', 'never redeemed');
      assert.deepEqual(tracking.body.data.credentials, []);
      const events = tracking.body.data.events.map((e: any) => e.event);
      assert.equal(events.filter((e: string) => e === 'tx_code_failed').length, 4);
      assert.ok(events.includes('tx_code_locked'));
    });
  });
}

/** A code of the same length and alphabet that is not the right one. */
function wrongCode(code: string, salt = 0): string {
  return code
    .split('')
    .map((c, i) => (i === 0 ? String((Number(c) + 1 + salt) % 10) : c))
    .join('');
}
