import assert from 'node:assert/strict';
import { createHash, randomUUID, verify, X509Certificate } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { decodeSdJwt } from '@sd-jwt/decode';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { CofferError } from '../../src/errors.ts';
import type { CredentialToIssue } from '../../src/formats/credential-issuance.ts';
import { issueSdJwtVc } from '../../src/formats/sd-jwt-vc/issue-credential.ts';
import {
  cofferFormats,
  makeTestIssuer,
  proofKey,
  receivedByCoffer,
  type TestIssuer,
} from '../helpers/issuance.ts';
import { tokenStatusListJwt } from '../status/status-lists.ts';

/**
 * Coffer's dc+sd-jwt issuance, checked by the OpenWallet Foundation's @sd-jwt/sd-jwt-vc as a
 * verifier (the x5c leaf's key, which must chain to the issuer's CA; the Token Status List
 * fetched through the library), and by Coffer's wallet as an OpenID4VCI credential.
 */

const VCT = 'https://coffer.example/vct/pid';
const CLAIMS = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birthdate: '1815-12-10',
  nationalities: ['GB', 'FR'],
  address: { street_address: '12 St James Square', locality: 'London', country: 'GB' },
  is_over_18: true,
};
const STATUS_URI = 'https://coffer.example/v1/status-lists/token-1';

const sha256 = (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash('sha256')
      .update(typeof data === 'string' ? data : Buffer.from(data))
      .digest(),
  );

let issuer: TestIssuer;
before(async () => {
  issuer = await makeTestIssuer({ intermediate: true });
});

const credentialFor = (holder: CredentialToIssue['holder'], extra: Partial<CredentialToIssue> = {}) => ({
  id: `urn:uuid:${randomUUID()}`,
  type: VCT,
  claims: CLAIMS,
  holder,
  validFrom: new Date(Date.now() - 60_000),
  validUntil: new Date(Date.now() + 3600_000),
  status: { uri: STATUS_URI, index: 7 },
  ...extra,
});

/** A verifier trusting the issuer's CA: the leaf and intermediate of x5c must chain to it. */
function stockVerifier(statuses: number[] = new Array(16).fill(0)) {
  let leafKey: X509Certificate['publicKey'] | undefined;
  return new SDJwtVcInstance({
    hasher: sha256,
    hashAlg: 'sha-256',
    verifier: (data, signature) => {
      const header = JSON.parse(Buffer.from(data.split('.')[0]!, 'base64url').toString());
      const [leaf, intermediate] = (header.x5c as string[]).map(
        (der) => new X509Certificate(Buffer.from(der, 'base64')),
      );
      const ca = new X509Certificate(issuer.caDer);
      assert.ok(
        leaf!.verify(intermediate!.publicKey) && intermediate!.verify(ca.publicKey),
        'x5c chains to the CA',
      );
      leafKey = leaf!.publicKey;
      return verify(
        'sha256',
        Buffer.from(data),
        { key: leafKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      );
    },
    statusListFetcher: async (uri) => {
      assert.equal(uri, STATUS_URI);
      return tokenStatusListJwt({ uri, statuses, bits: 1, key: issuer.identity.signer.keys.privateKey });
    },
    // The list is signed by the credential's own signer (the leaf its signature was checked with).
    statusVerifier: (data, signature) =>
      verify(
        'sha256',
        Buffer.from(data),
        { key: leafKey!, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      ),
  });
}

describe('issuing dc+sd-jwt', () => {
  test('a stock SD-JWT VC verifier accepts it and reads every claim, bound to the proof key', async () => {
    const holder = proofKey();
    const now = new Date();
    const issued = await issueSdJwtVc(issuer.material, credentialFor({ jwk: holder.publicJwk }), now);
    assert.match(issued, /^[\w-]+\.[\w-]+\.[\w-]+~([\w-]+~)+$/);

    const { header, payload } = await stockVerifier().verify(issued);
    assert.equal(header?.['typ'], 'dc+sd-jwt');
    assert.equal(header?.['alg'], 'ES256');
    assert.deepEqual(header?.['x5c'], issuer.material.es256.x5c);
    const { given_name, family_name, birthdate, nationalities, address, is_over_18 } = payload as Record<
      string,
      unknown
    >;
    assert.deepEqual({ given_name, family_name, birthdate, nationalities, address, is_over_18 }, CLAIMS);
    assert.equal(payload['iss'], 'https://coffer.example/issuers/client-1');
    assert.equal(payload['vct'], VCT);
    assert.equal(payload['iat'], Math.floor(now.getTime() / 1000));
    assert.equal(typeof payload['exp'], 'number');
    assert.deepEqual(payload['cnf'], { jwk: holder.publicJwk });
    assert.deepEqual(payload['status'], { status_list: { idx: 7, uri: STATUS_URI } });
    assert.equal(payload['jti'], undefined, 'no identifier that would link its presentations');
  });

  test('every claim is selectively disclosable, nested members and array elements too', async () => {
    const issued = await issueSdJwtVc(
      issuer.material,
      credentialFor({ jwk: proofKey().publicJwk }),
      new Date(),
    );
    const decoded = await decodeSdJwt(issued, sha256);
    const plain = decoded.jwt.payload as Record<string, unknown>;
    for (const claim of Object.keys(CLAIMS)) assert.equal(plain[claim], undefined, `${claim} is not plain`);
    // Six top-level claims, three address members, two nationalities.
    assert.equal(decoded.disclosures.length, 11);
    assert.equal(plain['_sd_alg'], 'sha-256');

    const instance = stockVerifier();
    const presented = await instance.present(issued, { given_name: true, address: { locality: true } });
    const { payload } = await instance.verify(presented);
    assert.equal(payload['given_name'], 'Ada');
    assert.deepEqual(payload['address'], { locality: 'London' });
    assert.equal(payload['family_name'], undefined);
    assert.equal(payload['nationalities'], undefined);
  });

  test('the paths the issuer keeps plain are in the signed JWT itself', async () => {
    const issued = await issueSdJwtVc(
      issuer.material,
      credentialFor(
        { jwk: proofKey().publicJwk },
        { alwaysDisclosed: [['is_over_18'], ['address', 'country'], ['nationalities', null]] },
      ),
      new Date(),
    );
    const instance = stockVerifier();
    const presented = await instance.present(issued, { address: {}, nationalities: true });
    const { payload } = await instance.verify(presented);
    assert.equal(payload['is_over_18'], true);
    assert.deepEqual(payload['address'], { country: 'GB' });
    assert.deepEqual(payload['nationalities'], ['GB', 'FR']);
    assert.equal(payload['given_name'], undefined);
    const signed = (await decodeSdJwt(issued, sha256)).jwt.payload as Record<string, unknown>;
    assert.equal(signed['is_over_18'], true);
    assert.equal(signed['address'], undefined, 'address itself stays disclosable');
  });

  test('a verifier that reads the status list refuses the credential once its entry is revoked', async () => {
    const issued = await issueSdJwtVc(
      issuer.material,
      credentialFor({ jwk: proofKey().publicJwk }),
      new Date(),
    );
    const revoked = new Array(16).fill(0);
    revoked[7] = 1;
    await assert.rejects(stockVerifier(revoked).verify(issued), /Status is not valid/);
  });

  test("Coffer's wallet keeps it as an OpenID4VCI credential bound to the proof key", async () => {
    const holder = proofKey();
    const issued = await issueSdJwtVc(issuer.material, credentialFor({ jwk: holder.publicJwk }), new Date());
    const parsed = await receivedByCoffer(issuer, 'dc+sd-jwt', issued, { jwk: holder.publicJwk });
    assert.equal(parsed.summary.type, VCT);
    assert.equal(parsed.summary.issuer, 'https://coffer.example/issuers/client-1');
    assert.equal(parsed.summary.issuerCertificate?.trusted, true);
    assert.equal(parsed.summary.claims['given_name'], 'Ada');
    const reference = cofferFormats
      .get('dc+sd-jwt')
      .statusReference(issued, { now: new Date(), issuerTrustAnchors: [] });
    assert.deepEqual(reference && { list: reference.list, uri: reference.uri, index: reference.index }, {
      list: 'token',
      uri: STATUS_URI,
      index: 7,
    });
  });

  test('a holder named by a DID is bound by cnf.kid', async () => {
    const did = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
    const issued = await issueSdJwtVc(issuer.material, credentialFor({ did }), new Date());
    const { payload } = await stockVerifier().verify(issued);
    assert.deepEqual(payload['cnf'], { kid: `${did}#${did.slice('did:key:'.length)}` });
  });

  test('a claim the issuer sets itself cannot come from the claims', async () => {
    const credential = credentialFor(
      { jwk: proofKey().publicJwk },
      { claims: { ...CLAIMS, iss: 'https://evil.example' } },
    );
    await assert.rejects(issueSdJwtVc(issuer.material, credential, new Date()), CofferError);
  });
});
