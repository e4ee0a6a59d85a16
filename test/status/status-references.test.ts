import assert from 'node:assert/strict';
import { generateKeyPairSync, type JsonWebKey, KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { fastBbs } from '../../src/bbs/index.ts';
import type { ParseContext, StatusReference } from '../../src/formats/credential-format.ts';
import { createJwtVcJsonFormat } from '../../src/formats/jwt-vc-json/index.ts';
import { inProcessOperations } from '../../src/formats/ldp-vc/bbs-2023/operations.ts';
import { createDocumentLoader } from '../../src/formats/ldp-vc/contexts/document-loader.ts';
import { createLdpVcFormat } from '../../src/formats/ldp-vc/index.ts';
import { msoMdocFormat } from '../../src/formats/mso-mdoc/index.ts';
import { sdJwtVcFormat } from '../../src/formats/sd-jwt-vc/index.ts';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { createStatusChecker } from '../../src/status/status-checker.ts';
import { createStockIssuer, personCredential, type StockIssuer } from '../credentials/stock-issuer.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer, type JwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc, reissue } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_CLAIMS } from '../helpers/issuers/sd-jwt-issuer.ts';
import {
  bitstringEntry,
  bitstringListCredential,
  type ListServer,
  startListServer,
  tokenStatusListJwt,
} from './status-lists.ts';

/**
 * Each format names where its credential's status is published and with which issuer key the
 * list must verify; a credential from each test issuer is then checked against a list that the
 * same issuer signed.
 */

const jsonLd = { documentLoader: createDocumentLoader(async () => undefined) };
const operations = inProcessOperations({ bbs: fastBbs, jsonLd });
const ldpVcFormat = createLdpVcFormat({ operations, jsonLd });
const jwtVcJsonFormat = createJwtVcJsonFormat(jsonLd);
const context = (): ParseContext => ({ now: new Date(), issuerTrustAnchors: [] });
const deviceJwk = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as JsonWebKey;
const holderDid = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';

let server: ListServer;
let identity: IssuerIdentity;
let jwtIssuer: JwtVcIssuer;
let stock: StockIssuer;

before(async () => {
  [server, identity, jwtIssuer, stock] = await Promise.all([
    startListServer(),
    makeIssuerIdentity(),
    createJwtVcIssuer(),
    createStockIssuer(),
  ]);
});
after(() => server.close());

const checker = () =>
  createStatusChecker({
    outbound: createOutboundClient({ allowPrivateTargets: true, ca: server.ca }),
    now: () => new Date(),
    verifyBaseProof: (document, key) => operations.verifyBaseProof(document, key),
  });

/** The public key of the issuer's document signer, as the formats give it. */
const signerKey = () => KeyObject.from(identity.signer.keys.publicKey);

/** A token list at `at`, signed by the document signer, with status 1 (revoked) at index 3. */
async function serveSignerList(at: string) {
  const uri = `${server.origin}${at}`;
  const body = await tokenStatusListJwt({
    uri,
    statuses: [0, 0, 0, 1],
    bits: 1,
    key: identity.signer.keys.privateKey,
  });
  server.serve(at, { body });
  return uri;
}

function assertKeyReference(
  reference: StatusReference | null,
  expected: { list: 'token' | 'bitstring'; uri: string; index: number },
) {
  assert.ok(reference, 'a status reference');
  assert.equal(reference.list, expected.list);
  assert.equal(reference.uri, expected.uri);
  assert.equal(reference.index, expected.index);
  assert.equal(reference.issuerKey.kind, 'jose');
}

describe('dc+sd-jwt', () => {
  test('status.status_list names the list and the x5c signer key; checked against it', async () => {
    const uri = await serveSignerList('/refs/sd-jwt');
    const stored = await issueSdJwtVc(identity, {
      holderJwk: deviceJwk(),
      claims: { ...PID_CLAIMS, status: { status_list: { idx: 3, uri } } },
    });
    const reference = sdJwtVcFormat.statusReference(stored, context());
    assertKeyReference(reference, { list: 'token', uri, index: 3 });
    assert.ok((reference!.issuerKey as { key: KeyObject }).key.equals(signerKey()));
    assert.deepEqual(await checker().check(reference!), { state: 'revoked' });
  });

  test('no status entry, an http list or a malformed idx: null', async () => {
    const holderJwk = deviceJwk();
    assert.equal(sdJwtVcFormat.statusReference(await issueSdJwtVc(identity, { holderJwk }), context()), null);
    for (const status_list of [
      { idx: 3, uri: 'http://issuer.example/list' },
      { idx: -1, uri: 'https://issuer.example/list' },
      { idx: '3', uri: 'https://issuer.example/list' },
    ]) {
      const stored = await issueSdJwtVc(identity, {
        holderJwk,
        claims: { ...PID_CLAIMS, status: { status_list } },
      });
      assert.equal(sdJwtVcFormat.statusReference(stored, context()), null, JSON.stringify(status_list));
    }
    assert.equal(sdJwtVcFormat.statusReference('not an sd-jwt', context()), null);
  });
});

describe('mso_mdoc', () => {
  test("the MSO's status names the list and the x5chain leaf key; checked against it", async () => {
    const uri = await serveSignerList('/refs/mdoc');
    const issued = await issueMdoc(identity, { deviceJwk: deviceJwk() });
    const { value: stored } = await reissue(identity, issued, {
      mso: (mso) =>
        mso.set(
          'status',
          new Map([
            [
              'status_list',
              new Map<string, unknown>([
                ['idx', 3],
                ['uri', uri],
              ]),
            ],
          ]),
        ),
    });
    const reference = msoMdocFormat.statusReference(stored, context());
    assertKeyReference(reference, { list: 'token', uri, index: 3 });
    assert.ok((reference!.issuerKey as { key: KeyObject }).key.equals(signerKey()));
    assert.deepEqual(await checker().check(reference!), { state: 'revoked' });
  });

  test('an mdoc without status: null', async () => {
    const stored = await issueMdoc(identity, { deviceJwk: deviceJwk() });
    assert.equal(msoMdocFormat.statusReference(stored, context()), null);
    assert.equal(msoMdocFormat.statusReference('AAAA', context()), null);
  });
});

describe('jwt_vc_json', () => {
  test("vc.credentialStatus names the list, its purpose and the issuer's did:jwk key", async () => {
    const uri = 'https://issuer.example/lists/1';
    const stored = await jwtIssuer.issue({
      subject: holderDid,
      credentialStatus: bitstringEntry(uri, 94567),
    });
    const reference = jwtVcJsonFormat.statusReference(stored, context());
    assertKeyReference(reference, { list: 'bitstring', uri, index: 94567 });
    assert.equal(reference!.list === 'bitstring' && reference!.purpose, 'revocation');
    const jwk = (reference!.issuerKey as { key: JsonWebKey }).key;
    assert.equal(`did:jwk:${Buffer.from(JSON.stringify(jwk)).toString('base64url')}`, jwtIssuer.did);
  });

  test('several entries: revocation before suspension; others, none or unusable ones: null', async () => {
    const uri = 'https://issuer.example/lists/1';
    const both = await jwtIssuer.issue({
      subject: holderDid,
      credentialStatus: [bitstringEntry(uri, 1, 'suspension'), bitstringEntry(uri, 2, 'revocation')],
    });
    const reference = jwtVcJsonFormat.statusReference(both, context());
    assert.equal(
      reference?.list === 'bitstring' && `${reference.purpose} ${reference.index}`,
      'revocation 2',
    );

    for (const credentialStatus of [
      undefined,
      bitstringEntry(uri, 1, 'message'),
      { ...bitstringEntry(uri, 1), statusListIndex: 1 },
      { ...bitstringEntry(uri, 1), statusSize: 2 },
      bitstringEntry('http://issuer.example/lists/1', 1),
      { ...bitstringEntry(uri, 1), type: 'StatusList2021Entry' },
    ]) {
      const stored = await jwtIssuer.issue({ subject: holderDid, credentialStatus });
      assert.equal(
        jwtVcJsonFormat.statusReference(stored, context()),
        null,
        JSON.stringify(credentialStatus),
      );
    }
  });
});

describe('ldp_vc', () => {
  test("credentialStatus names the list and the issuer's BBS key; a list it signed is checked", async () => {
    const at = '/refs/ldp';
    const uri = `${server.origin}${at}`;
    const list = await stock.issue(
      bitstringListCredential({ uri, issuer: stock.did, purpose: 'revocation', setIndexes: [7] }),
    );
    server.serve(at, { body: JSON.stringify(list) });
    const stored = await stock.issue(
      personCredential(stock.did, holderDid, undefined, { credentialStatus: bitstringEntry(uri, 7) }),
    );
    const reference = ldpVcFormat.statusReference(stored, context());
    assert.ok(reference?.list === 'bitstring' && reference.issuerKey.kind === 'bbs');
    assert.equal(reference.uri, uri);
    assert.equal(reference.index, 7);
    assert.equal(reference.issuerKey.issuer, stock.did);
    assert.deepEqual(reference.issuerKey.publicKey, new Uint8Array(stock.publicKey));
    assert.deepEqual(await checker().check(reference), { state: 'revoked' });
    assert.deepEqual(await checker().check({ ...reference, index: 8 }), { state: 'valid' });
  });

  test('no credentialStatus, or a proof by a key of another DID: null', async () => {
    const plain = await stock.issue(personCredential(stock.did, holderDid));
    assert.equal(ldpVcFormat.statusReference(plain, context()), null);
    const entry = bitstringEntry('https://issuer.example/lists/1', 7);
    const signed = await stock.issue(
      personCredential(stock.did, holderDid, undefined, { credentialStatus: entry }),
    );
    const otherIssuer = { ...signed, issuer: 'did:key:zUC7other' };
    assert.equal(ldpVcFormat.statusReference(otherIssuer, context()), null);
    assert.equal(ldpVcFormat.statusReference({ credentialStatus: entry }, context()), null);
  });
});
