import assert from 'node:assert/strict';
import { randomUUID, X509Certificate } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import type { CredentialToIssue } from '../../src/formats/credential-issuance.ts';
import { didJwkOf } from '../../src/formats/credential-issuance.ts';
import { issueJwtVc } from '../../src/formats/jwt-vc-json/issue-credential.ts';
import {
  accountDid,
  cofferFormats,
  makeTestIssuer,
  proofKey,
  receivedByCoffer,
  type TestIssuer,
} from '../helpers/issuance.ts';
import { createDidHolder } from '../helpers/issuers/holder.ts';

/**
 * Coffer's jwt_vc_json issuance (VC Data Model 1.1 as a JWT), checked with jose against the x5c
 * leaf's key and against the key its did:jwk `iss` names, and kept by Coffer's wallet.
 */

const SUBJECT = { given_name: 'Ada', degree: { type: 'BachelorDegree', name: 'Mathematics' } };
/** Claims as the credential addresses them, as claim paths do. */
const CLAIMS = { credentialSubject: SUBJECT };
const STATUS_URI = 'https://coffer.example/v1/status-lists/bitstring-1';

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
  status: { uri: STATUS_URI, index: 131_000 },
  ...extra,
});

describe('issuing jwt_vc_json', () => {
  test('jose verifies it with the x5c leaf key, and the VC says what was issued', async () => {
    const subject = accountDid();
    const credential = credentialFor({ did: subject });
    const issued = await issueJwtVc(issuer.material, credential, new Date());
    const header = decodeProtectedHeader(issued);
    assert.equal(header.typ, 'JWT');
    assert.deepEqual(header.x5c, issuer.material.es256.x5c);
    const leaf = new X509Certificate(Buffer.from(header.x5c![0]!, 'base64'));
    assert.ok(leaf.verify(new X509Certificate(issuer.caDer).publicKey), 'x5c chains to the CA');

    const { payload } = await jwtVerify(issued, leaf.publicKey, { algorithms: ['ES256'], subject });
    assert.equal(payload.jti, credential.id);
    assert.equal(payload.nbf, Math.floor(credential.validFrom.getTime() / 1000));
    assert.equal(payload.exp, Math.floor(credential.validUntil.getTime() / 1000));
    assert.deepEqual(payload['vc'], {
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      id: credential.id,
      type: ['VerifiableCredential', 'UniversityDegreeCredential'],
      credentialSubject: { id: subject, ...SUBJECT },
      credentialStatus: {
        id: `${STATUS_URI}#131000`,
        type: 'BitstringStatusListEntry',
        statusPurpose: 'revocation',
        statusListIndex: '131000',
        statusListCredential: STATUS_URI,
      },
    });
  });

  test('its iss is a did:jwk of the same key, so DID-resolving verifiers accept it too', async () => {
    const issued = await issueJwtVc(issuer.material, credentialFor({ did: accountDid() }), new Date());
    const { iss } = JSON.parse(Buffer.from(issued.split('.')[1]!, 'base64url').toString());
    assert.match(iss, /^did:jwk:/);
    const jwk = JSON.parse(Buffer.from(iss.slice('did:jwk:'.length), 'base64url').toString());
    assert.equal(jwk.d, undefined, 'no private member');
    await jwtVerify(issued, await importJWK(jwk, 'ES256'));
    assert.equal(decodeProtectedHeader(issued).kid, `${iss}#0`);
  });

  test('a holder given as a key is named by its did:jwk', async () => {
    const holder = await createDidHolder('jwk');
    const { kty, crv, x, y } = (await crypto.subtle.exportKey('jwk', holder.keys.publicKey)) as Record<
      string,
      string
    >;
    assert.equal(didJwkOf({ kty, crv, x, y }), holder.did);
    const issued = await issueJwtVc(
      issuer.material,
      credentialFor({ jwk: proofKey().publicJwk }),
      new Date(),
    );
    const { sub, vc } = JSON.parse(Buffer.from(issued.split('.')[1]!, 'base64url').toString());
    assert.match(sub, /^did:jwk:/);
    assert.equal(vc.credentialSubject.id, sub);
  });

  test("Coffer's wallet keeps it for the account whose DID is its subject", async () => {
    const did = accountDid();
    const issued = await issueJwtVc(issuer.material, credentialFor({ did }), new Date());
    const parsed = await receivedByCoffer(issuer, 'jwt_vc_json', issued, { did });
    assert.equal(parsed.summary.issuerCertificate?.trusted, true);
    assert.deepEqual(parsed.summary.type, ['VerifiableCredential', 'UniversityDegreeCredential']);
    const reference = cofferFormats
      .get('jwt_vc_json')
      .statusReference(issued, { now: new Date(), issuerTrustAnchors: [] });
    assert.deepEqual(reference && { list: reference.list, uri: reference.uri, index: reference.index }, {
      list: 'bitstring',
      uri: STATUS_URI,
      index: 131_000,
    });
  });
});
