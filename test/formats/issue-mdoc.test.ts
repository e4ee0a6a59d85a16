import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { base64url, DateOnly, Holder, IssuerSigned, Verifier } from '@owf/mdoc';
import * as cborg from 'cborg';
import type { CredentialToIssue } from '../../src/formats/credential-issuance.ts';
import { issueMdoc } from '../../src/formats/mso-mdoc/issue-credential.ts';
import {
  cofferFormats,
  makeTestIssuer,
  proofKey,
  receivedByCoffer,
  type TestIssuer,
} from '../helpers/issuance.ts';
import { alterElement, MDL_DOCTYPE, MDL_NAMESPACE, testMdocContext } from '../helpers/issuers/mdoc-issuer.ts';
import { presentMdoc, transcriptOf } from '../helpers/mdoc-device-response.ts';

/**
 * Coffer's mso_mdoc issuance, checked by the OpenWallet Foundation's @owf/mdoc (issuerAuth over
 * x5chain to the issuer's CA, every value digest, validity; a DeviceResponse signed by the proof
 * key), read with cborg, and kept by Coffer's wallet as an OpenID4VCI credential.
 */

const ELEMENTS = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birth_date: new DateOnly('1815-12-10'),
  age_over_18: true,
  issuing_country: 'GB',
  document_number: 'GB-123456',
  driving_privileges: [{ vehicle_category_code: 'B' }],
};
const STATUS_URI = 'https://coffer.example/v1/status-lists/token-2';

let issuer: TestIssuer;
before(async () => {
  issuer = await makeTestIssuer();
});

const credentialFor = (holder: CredentialToIssue['holder'], extra: Partial<CredentialToIssue> = {}) => ({
  id: `urn:uuid:${randomUUID()}`,
  type: MDL_DOCTYPE,
  claims: { [MDL_NAMESPACE]: ELEMENTS, 'org.example.1': { score: 7 } },
  holder,
  validFrom: new Date(Date.now() - 60_000),
  status: { uri: STATUS_URI, index: 12 },
  ...extra,
});

describe('issuing mso_mdoc', () => {
  test('@owf/mdoc verifies its issuerAuth chain, signature, digests and validity', async () => {
    const holder = proofKey();
    const issued = await issueMdoc(issuer.material, credentialFor({ jwk: holder.publicJwk }), new Date());
    assert.match(issued, /^[\w-]+$/, 'base64url without padding');
    await Holder.verifyIssuerSigned(
      { issuerSigned: issued, trustedCertificates: [issuer.caDer], now: new Date() },
      testMdocContext,
    );
    const altered = alterElement(issued, MDL_NAMESPACE, 'age_over_18', false);
    await assert.rejects(
      Holder.verifyIssuerSigned(
        { issuerSigned: altered, trustedCertificates: [issuer.caDer] },
        testMdocContext,
      ),
      /digest/,
    );

    const issuerSigned = IssuerSigned.decode(base64url.decode(issued));
    const mso = issuerSigned.issuerAuth.mobileSecurityObject;
    assert.equal(mso.docType, MDL_DOCTYPE);
    assert.equal(mso.digestAlgorithm, 'SHA-256');
    const { kty, crv, x, y } = mso.deviceKeyInfo.deviceKey.jwk as Record<string, unknown>;
    assert.deepEqual({ kty, crv, x, y }, holder.publicJwk);
    const { validFrom, validUntil } = mso.validityInfo;
    assert.equal(validUntil.getTime() - validFrom.getTime(), 365 * 24 * 3600_000, 'a year unless told');
    const items = issuerSigned.issuerNamespaces?.issuerNamespaces.get(MDL_NAMESPACE) ?? [];
    const elements = Object.fromEntries(items.map((item) => [item.elementIdentifier, item.elementValue]));
    assert.deepEqual(Object.keys(elements).sort(), Object.keys(ELEMENTS).sort());
    assert.equal(elements['given_name'], 'Ada');
    assert.ok(elements['birth_date'] instanceof DateOnly, 'a full-date stays a full-date');
  });

  test('the proof key presents it: @owf/mdoc verifies a DeviceResponse it signs', async () => {
    const holder = proofKey();
    const issued = await issueMdoc(issuer.material, credentialFor({ jwk: holder.publicJwk }), new Date());
    const transcript = transcriptOf({
      clientId: 'x509_hash:abc',
      nonce: 'n-0S6_WzA2Mj',
      thumbprint: null,
      responseUri: 'https://verifier.example/response',
    });
    const response = presentMdoc(issued, {
      disclose: ['given_name', 'age_over_18'],
      transcript,
      device: { ...holder, alg: -7 },
    });
    await Verifier.verifyDeviceResponse(
      {
        deviceResponse: base64url.decode(response),
        sessionTranscript: transcript,
        trustedCertificates: [issuer.caDer],
      },
      testMdocContext,
    );
  });

  test('read with cborg: ES256 protected, x5chain unprotected, the status entry in the MSO', async () => {
    const issued = await issueMdoc(issuer.material, credentialFor({ jwk: proofKey().publicJwk }), new Date());
    const tags: cborg.TagDecoder[] = [];
    tags[24] = (bytes: Uint8Array) => cborg.decode(bytes, { tags, useMaps: true });
    tags[0] = (text: string) => new Date(text);
    tags[1004] = (text: string) => text;
    const issuerSigned = cborg.decode(base64url.decode(issued), { tags, useMaps: true }) as Map<
      string,
      unknown
    >;
    const [protectedHeader, unprotectedHeader, payload] = issuerSigned.get('issuerAuth') as [
      Uint8Array,
      Map<number, unknown>,
      Uint8Array,
    ];
    assert.deepEqual(cborg.decode(protectedHeader, { useMaps: true }), new Map([[1, -7]]));
    // One certificate: x5chain is the leaf's DER itself (RFC 9360).
    assert.deepEqual(
      Buffer.from(unprotectedHeader.get(33) as Uint8Array),
      Buffer.from(issuer.identity.signer.der, 'base64'),
    );
    const mso = cborg.decode(payload, { tags, useMaps: true }) as Map<string, unknown>;
    assert.equal(mso.get('version'), '1.0');
    assert.deepEqual(
      mso.get('status'),
      new Map([
        [
          'status_list',
          new Map<string, unknown>([
            ['idx', 12],
            ['uri', STATUS_URI],
          ]),
        ],
      ]),
    );
    const items = (issuerSigned.get('nameSpaces') as Map<string, Map<string, unknown>[]>).get(MDL_NAMESPACE)!;
    assert.equal(
      items.find((item) => item.get('elementIdentifier') === 'birth_date')?.get('elementValue'),
      '1815-12-10',
    );
    const ids = items.map((item) => item.get('digestID') as number).sort((a, b) => a - b);
    assert.deepEqual(ids, [...ids.keys()], 'one digest ID per element');
    for (const item of items) assert.equal((item.get('random') as Uint8Array).length, 16);
  });

  test("Coffer's wallet keeps it as an OpenID4VCI credential bound to the proof key", async () => {
    const holder = proofKey();
    const issued = await issueMdoc(
      issuer.material,
      credentialFor({ jwk: holder.publicJwk }, { validUntil: new Date(Date.now() + 86400_000) }),
      new Date(),
    );
    const parsed = await receivedByCoffer(issuer, 'mso_mdoc', issued, { jwk: holder.publicJwk });
    assert.equal(parsed.summary.type, MDL_DOCTYPE);
    assert.equal(parsed.summary.issuerCertificate?.trusted, true);
    assert.deepEqual(parsed.summary.claims['org.example.1'], { score: 7 });
    assert.equal(
      (parsed.summary.claims[MDL_NAMESPACE] as Record<string, unknown>)['birth_date'],
      '1815-12-10',
    );
    const reference = cofferFormats
      .get('mso_mdoc')
      .statusReference(issued, { now: new Date(), issuerTrustAnchors: [] });
    assert.deepEqual(reference && { list: reference.list, uri: reference.uri, index: reference.index }, {
      list: 'token',
      uri: STATUS_URI,
      index: 12,
    });
  });
});
