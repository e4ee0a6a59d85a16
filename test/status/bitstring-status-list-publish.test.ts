import assert from 'node:assert/strict';
import { KeyObject, X509Certificate } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { base58btc } from 'multiformats/bases/base58';
import { fastBbs } from '../../src/bbs/index.ts';
import { verifyBaseProof } from '../../src/formats/ldp-vc/bbs-2023/base-proof.ts';
import { createDocumentLoader } from '../../src/formats/ldp-vc/contexts/document-loader.ts';
import {
  bitstringStatusAt,
  openListDocument,
  openListJwt,
  readListCredential,
} from '../../src/status/bitstring-status-list.ts';
import {
  type BbsIssuerKey,
  bitstringListCredential,
  signBitstringListJwt,
  signBitstringListLdp,
} from '../../src/status/bitstring-status-list-publish.ts';
import type { ListSigner } from '../../src/status/list-signer.ts';
import {
  drawFreeIndex,
  emptyBitstring,
  LIST_SIZE,
  setBitstringBit,
} from '../../src/status/status-list-bits.ts';
import { chainOf, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';

/**
 * Bitstring Status List credentials as Coffer publishes them: the list read by a decoder written
 * here from the W3C text (multibase 'u', base64url, GZIP, index 0 the leftmost bit), the VC-JWT
 * verified with jose, and both forms accepted by Coffer's own reader (bitstring-status-list.ts).
 */

const URI = 'https://issuer.example/v1/status-lists/12';
const ISSUER = 'https://issuer.example/issuers/3';
const now = new Date();
const deps = { bbs: fastBbs, jsonLd: { documentLoader: createDocumentLoader(async () => undefined) } };
let signer: ListSigner;
let bbsKey: BbsIssuerKey;

before(async () => {
  const identity = await makeIssuerIdentity('Bitstring Issuer');
  signer = { privateKey: KeyObject.from(identity.signer.keys.privateKey), x5c: chainOf(identity) };
  const pair = await fastBbs.generateKeyPair();
  bbsKey = { ...pair, did: `did:key:${base58btc.encode(Uint8Array.from([0xeb, 0x01, ...pair.publicKey]))}` };
});

/** The spec's decoding, independently of Coffer: 'u' + base64url (no pad) of GZIP; bit i is MSB-first. */
function bitsOf(encodedList: string) {
  assert.equal(encodedList[0], 'u');
  const bytes = gunzipSync(Buffer.from(encodedList.slice(1), 'base64url'));
  return { size: bytes.length * 8, isSet: (i: number) => ((bytes[i >> 3]! >> (7 - (i % 8))) & 1) === 1 };
}

function listWith(set: number[], purpose: 'revocation' | 'suspension' = 'revocation', issuer = ISSUER) {
  const bytes = emptyBitstring();
  for (const index of set) setBitstringBit(bytes, index, true);
  return bitstringListCredential({
    uri: URI,
    issuer,
    purpose,
    bytes,
    validFrom: now,
    validUntil: new Date(now.getTime() + 86400_000),
  });
}

const subjectOf = (credential: Record<string, unknown>) =>
  credential['credentialSubject'] as { encodedList: string; statusPurpose: string; id: string };

describe('BitstringStatusListCredential', () => {
  test('a VC 2.0 credential whose encodedList an independent decoder reads, index for index', () => {
    const taken = new Set<number>();
    for (let i = 0; i < 50; i++) taken.add(drawFreeIndex(taken)!);
    const credential = listWith([...taken]);
    assert.deepEqual(credential['@context'], ['https://www.w3.org/ns/credentials/v2']);
    assert.deepEqual(credential['type'], ['VerifiableCredential', 'BitstringStatusListCredential']);
    assert.equal(credential['id'], URI);
    assert.match(String(credential['validFrom']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const subject = subjectOf(credential);
    assert.equal(subject.id, `${URI}#list`);
    assert.equal(subject.statusPurpose, 'revocation');
    assert.doesNotMatch(subject.encodedList, /[=+/]/, 'base64url without padding');
    const list = bitsOf(subject.encodedList);
    assert.equal(list.size, LIST_SIZE);
    for (let i = 0; i < LIST_SIZE; i++) assert.equal(list.isSet(i), taken.has(i), `index ${i}`);
    assert.ok(subject.encodedList.length < 2048, `${subject.encodedList.length} characters for 50 set bits`);
  });

  test('the VC-JWT: typ vc+jwt, x5c, the credential as claims; Coffer reads it with the issuer key', async () => {
    const jwt = signBitstringListJwt(listWith([7, 70_000], 'suspension'), signer);
    const header = decodeProtectedHeader(jwt);
    assert.deepEqual([header.alg, header.typ, header.cty], ['ES256', 'vc+jwt', 'vc']);
    const leaf = new X509Certificate(Buffer.from(header.x5c![0]!, 'base64'));
    const { payload } = await compactVerify(jwt, leaf.publicKey, { algorithms: ['ES256'] });
    const claims = JSON.parse(Buffer.from(payload).toString());
    assert.equal(bitsOf(subjectOf(claims).encodedList).isSet(70_000), true);

    const { credential, exp } = await openListJwt(jwt, leaf.publicKey);
    const list = readListCredential(credential, URI, exp, now);
    assert.deepEqual(bitstringStatusAt(list, 70_000, 'suspension'), { state: 'suspended' });
    assert.deepEqual(bitstringStatusAt(list, 7, 'suspension'), { state: 'suspended' });
    assert.deepEqual(bitstringStatusAt(list, 8, 'suspension'), { state: 'valid' });
    const other = await makeIssuerIdentity('Someone Else');
    await assert.rejects(openListJwt(jwt, KeyObject.from(other.signer.keys.publicKey)), /does not verify/);
  });

  test("the bbs-2023 list: a base proof by the issuer's did:key over everything, read by Coffer", async () => {
    const credential = listWith([42], 'revocation', bbsKey.did);
    const signed = await signBitstringListLdp(credential, bbsKey, deps);
    assert.equal(signed.proof.cryptosuite, 'bbs-2023');
    assert.equal(signed.proof.proofPurpose, 'assertionMethod');
    assert.equal(signed.proof.verificationMethod, `${bbsKey.did}#${bbsKey.did.slice('did:key:'.length)}`);
    const verify = (document: Parameters<typeof verifyBaseProof>[0], key: Uint8Array) =>
      verifyBaseProof(document, key, deps);

    const opened = await openListDocument(JSON.stringify(signed), bbsKey.did, bbsKey.publicKey, verify);
    const list = readListCredential(opened, URI, null, now);
    assert.deepEqual(bitstringStatusAt(list, 42, 'revocation'), { state: 'revoked' });
    assert.deepEqual(bitstringStatusAt(list, 43, 'revocation'), { state: 'valid' });

    // Any member changed after signing is caught: the list, the purpose, the dates.
    type Member = Record<string, unknown> & { credentialSubject: Record<string, unknown> };
    const cleared = subjectOf(listWith([])).encodedList;
    for (const change of [
      (doc: Member) => (doc.credentialSubject['encodedList'] = cleared),
      (doc: Member) => (doc.credentialSubject['statusPurpose'] = 'suspension'),
      (doc: Member) => (doc['validUntil'] = '2999-01-01T00:00:00Z'),
    ]) {
      const altered = structuredClone(signed) as unknown as Member;
      change(altered);
      await assert.rejects(
        openListDocument(JSON.stringify(altered), bbsKey.did, bbsKey.publicKey, verify),
        /proof does not verify/,
      );
    }
  });
});
