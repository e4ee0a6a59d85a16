import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  TOKEN_LIST_ACCEPT,
  TOKEN_LIST_CWT_MEDIA_TYPE,
  tokenStatusAt,
  verifyTokenStatusListCwt,
} from '../../src/status/token-status-list.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import {
  decideIssuance,
  eventually,
  issuanceView,
  listed,
  startIssuance,
} from '../oid4vci/issuance-helpers.ts';
import { walletJson } from '../wallet/wallet-helpers.ts';
import { type IssuerAndWallet, offerQuery, startIssuerAndWallet } from './hosted-wallet-world.ts';

/**
 * Coffer's hosted wallet receives from Coffer's own issuer (issue #31), over HTTPS through a TLS
 * front as between two deployments: the tenant offers, the person opens the offer at the wallet,
 * logs in, approves with the tx_code, and the wallet stores the credential; a revocation by the
 * tenant shows in the wallet.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const MDL = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';

const CONFIGURATIONS: Record<string, Json> = {
  degree: {
    format: 'dc+sd-jwt',
    vct: 'https://university.example/degree',
    display: [{ name: 'University degree' }],
    claims: [
      { path: ['given_name'], mandatory: true, display: [{ name: 'Given name', locale: 'en' }] },
      { path: ['degree'] },
    ],
    status: true,
  },
  enrolment: {
    format: 'ldp_vc',
    type: 'EnrolmentCredential',
    claims: [
      {
        path: ['credentialSubject', 'given_name'],
        mandatory: true,
        display: [
          { name: 'Vorname', locale: 'de' },
          { name: 'Given name', locale: 'en' },
        ],
      },
      { path: ['credentialSubject', 'programme'], display: [{ name: 'Programme of study', locale: 'en' }] },
    ],
    status: true,
  },
  diploma: {
    format: 'jwt_vc_json',
    type: 'DiplomaCredential',
    claims: [
      { path: ['credentialSubject', 'degree', 'name'], display: [{ name: 'Degree', locale: 'en' }] },
      { path: ['credentialSubject', 'degree', 'type'] },
      { path: ['credentialSubject', 'honours', null], display: [{ name: 'Honours', locale: 'en' }] },
    ],
  },
  licence: {
    format: 'mso_mdoc',
    doctype: MDL,
    claims: [{ path: [NS, 'given_name'], mandatory: true }, { path: [NS, 'family_name'] }],
    status: true,
  },
};

/** The tenant offers one configuration with its claims and a tx_code; the person receives it. */
async function receive(world: IssuerAndWallet, configuration: string, claims: Json) {
  const offer = await world.api('POST', '/v1/issuer/offers', {
    configuration_ids: [configuration],
    claims: { [configuration]: claims },
    tx_code: {},
  });
  assert.equal(offer.status, 201, offer.text);
  const created = offer.body.data;
  const interactionPath = await startIssuance(world, offerQuery(created));
  const issuance = await issuanceView(world, interactionPath);
  const answer = await decideIssuance(world, interactionPath, {
    decision: 'approve',
    tx_code: created.tx_code,
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.received.length, 1, JSON.stringify(answer.body));
  return { created, issuance, received: answer.body.received[0], answer: answer.body };
}

/** The tenant's record of what an offer issued (ids, status list entries). */
async function issuedBy(world: IssuerAndWallet, offerId: string): Promise<Json[]> {
  const read = await world.api('GET', `/v1/issuer/credentials?offer=${offerId}`);
  assert.equal(read.status, 200, read.text);
  return read.body.data;
}

const shownIn = async (world: IssuerAndWallet, credentialId: string): Promise<Json> => {
  const wallet = await walletJson(world.server, world.cookie!);
  return wallet.credentials.find((c: { id: string }) => c.id === credentialId);
};

for (const kind of DATABASE_KINDS) {
  describe(`the hosted wallet receives from Coffer's issuer, on ${kind}`, () => {
    let world: IssuerAndWallet;
    before(async () => {
      world = await startIssuerAndWallet(kind);
      for (const [id, body] of Object.entries(CONFIGURATIONS)) {
        const put = await world.api('PUT', `/v1/issuer/configurations/${id}`, body);
        assert.equal(put.status, 201, put.text);
      }
    });
    after(() => world?.close());

    test('dc+sd-jwt: offer by reference, log-in, consent with the tx_code; the wallet lists its claims', async () => {
      const { created, received } = await receive(world, 'degree', {
        given_name: 'Ada',
        degree: 'BSc Mathematics',
      });
      assert.equal(received.format, 'dc+sd-jwt');
      const entry = (await listed(world)).find((e: Json) => e.id === received.credential_id);
      assert.ok(entry, 'the credential is in the list');
      assert.equal(entry.format, 'dc+sd-jwt');
      assert.equal(entry.type, 'https://university.example/degree');
      assert.equal(entry.claims.given_name, 'Ada');
      assert.equal(entry.claims.degree, 'BSc Mathematics');
      // The wallet told the issuer it kept the credential (Notification Endpoint).
      await eventually(async () => {
        const tracking = await world.api('GET', `/v1/issuer/offers/${created.id}`);
        return tracking.body.data.status === 'accepted' ? true : undefined;
      });
    });

    test("ldp_vc: a bbs-2023 credential from the issuer's did:key, its subject the person's DID", async () => {
      const { received } = await receive(world, 'enrolment', {
        credentialSubject: { given_name: 'Ada', programme: 'Mathematics' },
      });
      assert.equal(received.format, 'ldp_vc', JSON.stringify(received));
      const entry = (await listed(world)).find((e: Json) => e.id === received.credential_id);
      assert.ok(entry, 'the credential is in the list (an ldp_vc entry is the credential itself)');
      assert.equal(entry.proof.cryptosuite, 'bbs-2023');
      assert.match(entry.issuer, /^did:key:/);
      assert.deepEqual(entry.type, ['VerifiableCredential', 'EnrolmentCredential']);
      assert.equal(entry.credentialSubject.given_name, 'Ada');
      assert.equal(entry.credentialSubject.programme, 'Mathematics');
      assert.equal(entry.credentialSubject.id, world.user.did);
    });

    test("mso_mdoc: an mDL signed under the issuer's chain; the wallet lists its data elements", async () => {
      const { received } = await receive(world, 'licence', {
        [NS]: { given_name: 'Ada', family_name: 'Lovelace' },
      });
      assert.equal(received.format, 'mso_mdoc');
      const entry = (await listed(world)).find((e: Json) => e.id === received.credential_id);
      assert.ok(entry, 'the credential is in the list');
      assert.equal(entry.format, 'mso_mdoc');
      assert.equal(entry.type, MDL);
      assert.equal(entry.claims[NS].given_name, 'Ada');
      assert.equal(entry.claims[NS].family_name, 'Lovelace');
    });

    test('after the tenant revokes an SD-JWT VC (Token Status List) and an mdoc, the wallet shows both revoked and their siblings valid', async () => {
      // Viewed only after both changes: the wallet keeps a status list for its ttl (60 s).
      const pairs = [];
      for (const [configuration, claims] of [
        ['degree', { given_name: 'Grace' }],
        ['licence', { [NS]: { given_name: 'Grace' } }],
      ] as const) {
        const kept = await receive(world, configuration, claims);
        const revoked = await receive(world, configuration, claims);
        const [issued] = await issuedBy(world, revoked.created.id);
        assert.ok(issued.status_list, 'the credential has a status list entry');
        const change = await world.api('POST', `/v1/issuer/credentials/${issued.id}/status`, {
          status: 'revoked',
        });
        assert.equal(change.status, 200, change.text);
        pairs.push({ kept, revoked, issued });
      }
      for (const { kept, revoked } of pairs) {
        const shownRevoked = await shownIn(world, revoked.received.credential_id);
        assert.equal(shownRevoked.status?.state, 'revoked', JSON.stringify(shownRevoked));
        const shownKept = await shownIn(world, kept.received.credential_id);
        assert.equal(shownKept.status?.state, 'valid', JSON.stringify(shownKept));
      }
    });

    test("the mdoc's Token Status List in its CWT form (asked for alone) reads, with Coffer's reader and the issuer's key, revoked at the credential's index", async () => {
      const kept = await receive(world, 'licence', { [NS]: { given_name: 'Alan' } });
      const revoked = await receive(world, 'licence', { [NS]: { given_name: 'Alan' } });
      const [keptEntry] = await issuedBy(world, kept.created.id);
      const [revokedEntry] = await issuedBy(world, revoked.created.id);
      const change = await world.api('POST', `/v1/issuer/credentials/${revokedEntry.id}/status`, {
        status: 'revoked',
      });
      assert.equal(change.status, 200, change.text);
      const { uri } = revokedEntry.status_list;
      assert.equal(keptEntry.status_list.uri, uri, 'both in one list');
      const asCwt = await world.front.fetch(uri, { headers: { accept: TOKEN_LIST_CWT_MEDIA_TYPE } });
      assert.equal(asCwt.status, 200);
      assert.equal(asCwt.headers.get('content-type'), TOKEN_LIST_CWT_MEDIA_TYPE);
      const list = verifyTokenStatusListCwt(
        new Uint8Array(await asCwt.arrayBuffer()),
        uri,
        new X509Certificate(world.issuerLeaf.pem).publicKey,
        new Date(),
      );
      assert.deepEqual(tokenStatusAt(list, revokedEntry.status_list.index), { state: 'revoked' });
      assert.deepEqual(tokenStatusAt(list, keptEntry.status_list.index), { state: 'valid' });
      const either = await world.front.fetch(uri, { headers: { accept: TOKEN_LIST_ACCEPT } });
      assert.equal(
        either.headers.get('content-type'),
        'application/statuslist+jwt',
        'the JWT when both are taken',
      );
    });

    // Last: looking at the wallet caches the status lists the revocation tests above read afresh.
    test("the wallet shows each claim by the name the issuer's metadata gives it, W3C paths from credentialSubject", async () => {
      // What the page shows, label by label (a stored credential's members come in its own order).
      const labels = async (credentialId: string) =>
        Object.fromEntries((await shownIn(world, credentialId)).claims.map((c: Json) => [c.label, c.value]));
      const enrolment = await receive(world, 'enrolment', {
        credentialSubject: { given_name: 'Ada', programme: 'Mathematics' },
      });
      assert.deepEqual(await labels(enrolment.received.credential_id), {
        'Given name': 'Ada',
        'Programme of study': 'Mathematics',
      });
      const diploma = await receive(world, 'diploma', {
        credentialSubject: {
          degree: { type: 'BachelorDegree', name: 'BSc Mathematics' },
          honours: ['First class', "Dean's list"],
        },
      });
      assert.equal(diploma.received.format, 'jwt_vc_json');
      assert.deepEqual(await labels(diploma.received.credential_id), {
        // A claim the metadata describes without a name keeps its own.
        'degree.type': 'BachelorDegree',
        Degree: 'BSc Mathematics',
        Honours: "First class, Dean's list",
      });
      const degree = await receive(world, 'degree', { given_name: 'Ada', degree: 'BSc Mathematics' });
      assert.deepEqual(await labels(degree.received.credential_id), {
        'Given name': 'Ada',
        degree: 'BSc Mathematics',
      });
    });
  });
}
