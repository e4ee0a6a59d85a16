import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { createVerifyCryptosuite } from '@digitalbazaar/bbs-2023-cryptosuite';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import * as vc from '@digitalbazaar/vc';
import { type CredentialToIssue, dateTime } from '../../src/formats/credential-issuance.ts';
import { issueLdpVc } from '../../src/formats/ldp-vc/issue-credential.ts';
import { deriveWithStock, stockDocumentLoader } from '../credentials/stock-issuer.ts';
import {
  accountDid,
  cofferFormats,
  makeTestIssuer,
  receivedByCoffer,
  type TestIssuer,
} from '../helpers/issuance.ts';

/**
 * Coffer's ldp_vc issuance (VC 2.0, bbs-2023 base proof by Coffer's BBS core), checked by the
 * stock Digital Bazaar stack — a derived proof made and verified with
 * @digitalbazaar/bbs-2023-cryptosuite and @digitalbazaar/vc — and kept by Coffer's wallet.
 */

const SUBJECT = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  degree: { type: 'BachelorDegree', name: 'Mathematics' },
};
/** Claims as the credential addresses them, as claim paths do. */
const CLAIMS = { credentialSubject: SUBJECT };
const STATUS_URI = 'https://coffer.example/v1/status-lists/bitstring-2';

let issuer: TestIssuer;
before(async () => {
  issuer = await makeTestIssuer();
});

const credentialFor = (holder: CredentialToIssue['holder'], extra: Partial<CredentialToIssue> = {}) => ({
  id: `urn:uuid:${randomUUID()}`,
  type: 'UniversityDegreeCredential',
  claims: CLAIMS,
  holder,
  validFrom: new Date(Date.now() - 60_000),
  validUntil: new Date(Date.now() + 3600_000),
  status: { uri: STATUS_URI, index: 99 },
  ...extra,
});

/** @digitalbazaar/vc's verdict, its status check only recording the entry it was shown. */
async function verifyWithStock(derived: object, presentationHeader: Uint8Array) {
  const statusEntries: unknown[] = [];
  const result = await vc.verifyCredential({
    credential: derived,
    suite: new DataIntegrityProof({
      cryptosuite: createVerifyCryptosuite({ expectedPresentationHeader: presentationHeader }),
    }),
    documentLoader: stockDocumentLoader(),
    checkStatus: async ({ credential }: { credential: { credentialStatus: unknown } }) => {
      statusEntries.push(credential.credentialStatus);
      return { verified: true };
    },
  });
  return { result, statusEntries };
}

describe('issuing ldp_vc (bbs-2023)', () => {
  test('the stock stack derives a proof from it and verifies what was disclosed', async () => {
    const subject = accountDid();
    const credential = credentialFor({ did: subject });
    const issued = await issueLdpVc(issuer.material, credential, new Date());
    assert.equal(issued.issuer, issuer.material.bbs.did);
    assert.match(issuer.material.bbs.did, /^did:key:zUC[67]/);

    const header = new Uint8Array(randomBytes(16));
    const derived = await deriveWithStock(issued, ['/credentialSubject/given_name'], header);
    const { result, statusEntries } = await verifyWithStock(derived, header);
    assert.equal(result.verified, true, JSON.stringify(result.error ?? result.results, null, 1));
    // The subject's DID is the node every subject statement is about, so it comes along.
    assert.deepEqual(derived.credentialSubject, { id: subject, given_name: 'Ada' }, 'only what was chosen');
    // The mandatory statements: issuer, type, validity and status, whatever the holder chooses.
    assert.equal(derived.issuer, issuer.material.bbs.did);
    assert.deepEqual(derived.type, ['VerifiableCredential', 'UniversityDegreeCredential']);
    assert.equal(derived.validFrom, dateTime(credential.validFrom));
    assert.equal(derived.validUntil, dateTime(credential.validUntil));
    assert.deepEqual(statusEntries, [
      {
        id: `${STATUS_URI}#99`,
        type: 'BitstringStatusListEntry',
        statusPurpose: 'revocation',
        statusListIndex: '99',
        statusListCredential: STATUS_URI,
      },
    ]);
  });

  test('a derived proof of a nested claim, from a credential without status, verifies with the stock stack', async () => {
    const subject = accountDid();
    const issued = await issueLdpVc(
      issuer.material,
      credentialFor({ did: subject }, { status: undefined }),
      new Date(),
    );
    const header = new Uint8Array(randomBytes(16));
    const derived = await deriveWithStock(issued, ['/credentialSubject/degree/name'], header);
    const { result } = await verifyWithStock(derived, header);
    assert.equal(result.verified, true, JSON.stringify(result.error ?? result.results, null, 1));
    // Selecting a nested member keeps its object's type, as JSON-LD selection does.
    assert.deepEqual(derived.credentialSubject, {
      id: subject,
      degree: { type: 'BachelorDegree', name: 'Mathematics' },
    });
    assert.equal(derived.credentialStatus, undefined);
  });

  test("Coffer's wallet keeps it for the account whose DID is its subject, and presents from it", async () => {
    const did = accountDid();
    const issued = await issueLdpVc(issuer.material, credentialFor({ did }), new Date());
    const parsed = await receivedByCoffer(issuer, 'ldp_vc', issued, { did });
    assert.equal(parsed.summary.issuer, issuer.material.bbs.did);
    const reference = cofferFormats
      .get('ldp_vc')
      .statusReference(issued, { now: new Date(), issuerTrustAnchors: [] });
    assert.deepEqual(reference && { list: reference.list, uri: reference.uri, index: reference.index }, {
      list: 'bitstring',
      uri: STATUS_URI,
      index: 99,
    });

    // The hosted wallet's presentation (without holder binding: the bare derived credential).
    const derived = (await cofferFormats.get('ldp_vc').present({
      stored: issued,
      disclosed: ['/credentialSubject/family_name'],
      holder: null,
      audience: {
        clientId: 'x509_hash:abc',
        nonce: 'n',
        responseUri: 'https://v.example/r',
        encryptionJwkThumbprint: null,
      },
      prepared: parsed.check.prepared,
    })) as { credentialSubject: Record<string, unknown>; proof: object };
    assert.equal(derived.credentialSubject['family_name'], 'Lovelace');
    assert.equal(derived.credentialSubject['given_name'], undefined);
  });

  test('claims kept disclosed are mandatory: a derived proof shows them unasked, by path into the credential', async () => {
    const subject = accountDid();
    const issued = await issueLdpVc(
      issuer.material,
      credentialFor(
        { did: subject },
        {
          claims: { credentialSubject: { ...SUBJECT, awards: ['Prize', 'Medal'] } },
          alwaysDisclosed: [
            ['credentialSubject', 'degree', 'name'],
            ['credentialSubject', 'awards', null],
            ['credentialSubject', 'not_given'],
          ],
        },
      ),
      new Date(),
    );
    const header = new Uint8Array(randomBytes(16));
    const derived = await deriveWithStock(issued, ['/credentialSubject/given_name'], header);
    const { result } = await verifyWithStock(derived, header);
    assert.equal(result.verified, true, JSON.stringify(result.error ?? result.results, null, 1));
    assert.deepEqual(derived.credentialSubject, {
      id: subject,
      given_name: 'Ada',
      degree: { type: 'BachelorDegree', name: 'Mathematics' },
      awards: ['Prize', 'Medal'],
    });
  });

  test('claims are given under credentialSubject: anything else, or the subject id, is refused', async () => {
    for (const claims of [
      SUBJECT,
      { ...CLAIMS, issuer: 'did:example:evil' },
      { credentialSubject: { id: 'x' } },
    ]) {
      await assert.rejects(
        issueLdpVc(issuer.material, credentialFor({ did: accountDid() }, { claims }), new Date()),
        (error: Error) => /cannot be issued/.test(error.message),
      );
    }
  });

  test('a holder given as a key is the subject by its did:jwk', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const issued = await issueLdpVc(issuer.material, credentialFor({ jwk }), new Date());
    const subject = (issued['credentialSubject'] as { id: string }).id;
    assert.match(subject, /^did:jwk:/);
    await receivedByCoffer(issuer, 'ldp_vc', issued, { did: subject });
  });
});
