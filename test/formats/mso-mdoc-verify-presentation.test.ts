import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, X509Certificate } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { base64url, cborDecode, cborEncode, DateOnly } from '@owf/mdoc';
import * as cborg from 'cborg';
import { calculateJwkThumbprint } from 'jose';
import { verifyMdocPresentation } from '../../src/formats/mso-mdoc/verify-presentation.ts';
import type { PresentationExpectation } from '../../src/formats/presentation-verification.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import {
  alterElement,
  breakSignature,
  issueMdoc,
  MDL_DOCTYPE,
  MDL_NAMESPACE,
  reissue,
} from '../helpers/issuers/mdoc-issuer.ts';
import {
  type Device,
  deviceKey,
  type Handover,
  presentMdoc,
  transcriptOf,
} from '../helpers/mdoc-device-response.ts';
import { fingerprintOf, keyIdentifierOf } from '../oid4vp/certificates.ts';

/**
 * The verifier side of mso_mdoc with another party's code on the other side: the mdoc is issued
 * by @owf/mdoc (the test issuer), and the DeviceResponse is assembled the way a phone wallet
 * makes one (test/helpers/mdoc-device-response.ts: the SessionTranscript encoded with cborg from
 * the request's values, the COSE_Sign1 signed with node:crypto). Nothing of Coffer's wallet code
 * takes part.
 */

const CLIENT_ID = 'x509_san_dns:verifier.example';
const RESPONSE_URI = 'https://verifier.example/v1/verifier/requests/r1/response';
const ORIGIN = 'https://verifier.example';
const CHECK_NAMES = [
  'format',
  'issuer_signature',
  'issuer_trusted',
  'digests',
  'validity',
  'device_signature',
];
const ELEMENTS = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birth_date: new DateOnly('1815-12-10'),
  age_over_18: true,
  issue_date: new Date('2024-05-06T07:08:09Z'),
  portrait: new Uint8Array([1, 2, 3, 255]),
};

const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest());
const der = (base64: string) => new Uint8Array(Buffer.from(base64, 'base64'));

describe('mso_mdoc presentations, verifier side', () => {
  let identity: IssuerIdentity;
  let device: Device;
  let mdoc: string;
  let thumbprint: Uint8Array;
  let nonce: string;
  let handover: Extract<Handover, { clientId: string }>;

  const expected = (changes: Partial<PresentationExpectation> = {}): PresentationExpectation => ({
    audience: {
      clientId: CLIENT_ID,
      nonce,
      responseUri: RESPONSE_URI,
      encryptionJwkThumbprint: thumbprint,
    },
    now: new Date(),
    issuerTrustAnchors: [new X509Certificate(der(identity.ca.der))],
    trustedIssuerDids: [],
    holderBinding: true,
    transactionData: [],
    maxAgeSeconds: 300,
    ...changes,
  });

  const names = (result: { checks: { name: string }[] }) => result.checks.map((check) => check.name);

  /** A refused presentation: every check before `failing` passed, `failing` failed with one sentence, and nothing ran after it. */
  function assertRefusedAt(
    result: Awaited<ReturnType<typeof verifyMdocPresentation>>,
    failing: string,
    detail: RegExp,
  ) {
    assert.equal(result.ok, false);
    const at = CHECK_NAMES.indexOf(failing);
    assert.deepEqual(names(result), CHECK_NAMES.slice(0, at + 1));
    for (const check of result.checks.slice(0, at)) assert.deepEqual(check, { name: check.name, ok: true });
    const last = result.checks.at(-1)!;
    assert.equal(last.ok, false);
    assert.match(last.detail!, detail);
    assert.match(last.detail!, /^[A-Z].*\.$/);
  }

  before(async () => {
    identity = await makeIssuerIdentity();
    device = deviceKey('P-256');
    mdoc = await issueMdoc(identity, { deviceJwk: device.publicJwk, elements: ELEMENTS });
    const encryption = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    thumbprint = base64url.decode(await calculateJwkThumbprint(encryption as never, 'sha256'));
    nonce = randomBytes(16).toString('base64url');
    handover = { clientId: CLIENT_ID, nonce, thumbprint, responseUri: RESPONSE_URI };
  });

  test('a genuine presentation passes every check, in order, and shows only the elements presented', async () => {
    const presentation = presentMdoc(mdoc, {
      disclose: ['given_name', 'birth_date', 'issue_date', 'portrait'],
      transcript: transcriptOf(handover),
      device,
    });
    const result = await verifyMdocPresentation(presentation, expected());
    assert.deepEqual(
      result.checks,
      CHECK_NAMES.map((name) => ({ name, ok: true })),
    );
    assert.equal(result.ok, true);

    const claims = {
      [MDL_NAMESPACE]: {
        given_name: 'Ada',
        birth_date: '1815-12-10',
        issue_date: '2024-05-06T07:08:09.000Z',
        portrait: 'AQID_w',
      },
    };
    const signer = new X509Certificate(der(identity.signer.der));
    const certificate = {
      subject: signer.subject.replaceAll('\n', ', '),
      issuer: new X509Certificate(der(identity.ca.der)).subject.replaceAll('\n', ', '),
      fingerprint: fingerprintOf(identity.signer),
      notAfter: new Date(signer.validTo).toISOString(),
      trusted: true,
    };
    assert.deepEqual(result.issuer, { id: certificate.subject, trusted: true, certificate });
    // The chain's authority key identifiers come along, for a query's trusted_authorities.
    assert.deepEqual(result.dcqlInput, {
      credential_format: 'mso_mdoc',
      doctype: MDL_DOCTYPE,
      namespaces: claims,
      authority: { type: 'aki', values: [await keyIdentifierOf(identity.ca)] },
    });
    // The credential's identifier is SHA-256 of the issuerAuth COSE_Sign1, as the store computes it.
    const tags: cborg.TagDecoder[] = [];
    tags[24] = (bytes: Uint8Array) => bytes;
    const issuerSigned = cborg.decode(base64url.decode(mdoc), { useMaps: true, tags }) as Map<
      string,
      unknown
    >;
    const issuerAuth = issuerSigned.get('issuerAuth');
    assert.equal(result.summary?.format, 'mso_mdoc');
    assert.equal(
      result.summary?.id,
      createHash('sha256').update(cborg.encode(issuerAuth)).digest('base64url'),
    );
    assert.equal(result.summary?.issuer, certificate.subject);
    assert.equal(result.summary?.type, MDL_DOCTYPE);
    assert.deepEqual(result.summary?.claims, claims);
    assert.deepEqual(result.summary?.issuerCertificate, certificate);
    assert.equal(result.statusReference, null);
  });

  test('an Ed25519 device key (EdDSA) binds as well, under an issuerAuth in ESP256 (-9)', async () => {
    const ed = deviceKey('ed25519');
    const edMdoc = await issueMdoc(identity, { deviceJwk: ed.publicJwk, elements: ELEMENTS, algorithm: -9 });
    const presentation = presentMdoc(edMdoc, {
      disclose: ['family_name'],
      transcript: transcriptOf(handover),
      device: ed,
    });
    const result = await verifyMdocPresentation(presentation, expected());
    assert.equal(result.ok, true, JSON.stringify(result.checks));
    assert.deepEqual(result.summary?.claims, { [MDL_NAMESPACE]: { family_name: 'Lovelace' } });
  });

  test('a DeviceSignature over another transcript is refused at device_signature', async () => {
    const others: [string, Handover][] = [
      ['another nonce', { ...handover, nonce: `${nonce}x` }],
      ['another client_id', { ...handover, clientId: 'x509_san_dns:attacker.example' }],
      ['another response_uri', { ...handover, responseUri: 'https://attacker.example/response' }],
      ['no thumbprint where the response was encrypted', { ...handover, thumbprint: null }],
      ['another thumbprint', { ...handover, thumbprint: sha256(thumbprint) }],
      ['the DC API handover', { origin: ORIGIN, nonce, thumbprint }],
    ];
    for (const [what, other] of others) {
      const presentation = presentMdoc(mdoc, {
        disclose: ['given_name'],
        transcript: transcriptOf(other),
        device,
      });
      const result = await verifyMdocPresentation(presentation, expected());
      assertRefusedAt(result, 'device_signature', /DeviceSignature does not verify .* SessionTranscript/);
      // What was presented is still described, for the developer reading the result.
      assert.deepEqual(result.summary?.claims, { [MDL_NAMESPACE]: { given_name: 'Ada' } }, what);
    }

    // And the other way round: signed without a thumbprint, for a response that was not encrypted.
    const plain = presentMdoc(mdoc, {
      disclose: ['given_name'],
      transcript: transcriptOf({ ...handover, thumbprint: null }),
      device,
    });
    const unencrypted = expected();
    unencrypted.audience = { ...unencrypted.audience, encryptionJwkThumbprint: null };
    assert.equal((await verifyMdocPresentation(plain, unencrypted)).ok, true);
    assertRefusedAt(await verifyMdocPresentation(plain, expected()), 'device_signature', /does not verify/);
  });

  test('a DeviceSignature by a key other than the MSO device key is refused at device_signature', async () => {
    const presentation = presentMdoc(mdoc, {
      disclose: ['given_name'],
      transcript: transcriptOf(handover),
      device: deviceKey('P-256'),
    });
    assertRefusedAt(
      await verifyMdocPresentation(presentation, expected()),
      'device_signature',
      /does not verify with the MSO's device key/,
    );
    // An EdDSA signature where the MSO holds a P-256 key.
    const wrongAlgorithm = presentMdoc(mdoc, {
      disclose: ['given_name'],
      transcript: transcriptOf(handover),
      device: deviceKey('ed25519'),
    });
    assertRefusedAt(
      await verifyMdocPresentation(wrongAlgorithm, expected()),
      'device_signature',
      /algorithm EdDSA \(-8\) does not fit the MSO's P-256 device key/,
    );
  });

  test('the Digital Credentials API handover (B.2.6.2) verifies when the origin is expected', async () => {
    for (const encrypted of [thumbprint, null]) {
      const presentation = presentMdoc(mdoc, {
        disclose: ['age_over_18'],
        transcript: transcriptOf({ origin: ORIGIN, nonce, thumbprint: encrypted }),
        device,
      });
      const dcApi = expected({ origin: ORIGIN });
      dcApi.audience = {
        ...dcApi.audience,
        clientId: `origin:${ORIGIN}`,
        encryptionJwkThumbprint: encrypted,
      };
      const result = await verifyMdocPresentation(presentation, dcApi);
      assert.equal(result.ok, true, JSON.stringify(result.checks));
      assert.deepEqual(result.summary?.claims, { [MDL_NAMESPACE]: { age_over_18: true } });
      // Another origin, or no origin (the redirect handover), is another transcript.
      assertRefusedAt(
        await verifyMdocPresentation(presentation, { ...dcApi, origin: 'https://attacker.example' }),
        'device_signature',
        /\(origin, nonce, response encryption key\)/,
      );
      const { origin: _origin, ...redirects } = dcApi;
      assertRefusedAt(await verifyMdocPresentation(presentation, redirects), 'device_signature', /client_id/);
    }
  });

  test('an element whose value was altered is refused at digests', async () => {
    const altered = alterElement(mdoc, MDL_NAMESPACE, 'family_name', 'Byron');
    const presentation = presentMdoc(altered, {
      disclose: ['given_name', 'family_name'],
      transcript: transcriptOf(handover),
      device,
    });
    assertRefusedAt(
      await verifyMdocPresentation(presentation, expected()),
      'digests',
      /element org\.iso\.18013\.5\.1\/family_name does not match the digest the issuer signed/,
    );
  });

  test('an MSO signed for another docType than the document names is refused at digests', async () => {
    const presentation = presentMdoc(mdoc, {
      disclose: ['given_name'],
      transcript: transcriptOf(handover),
      device,
      docType: 'eu.europa.ec.eudi.pid.1',
    });
    assertRefusedAt(
      await verifyMdocPresentation(presentation, expected()),
      'digests',
      /signed for docType org\.iso\.18013\.5\.1\.mDL, not for the document's eu\.europa\.ec\.eudi\.pid\.1/,
    );
  });

  test('a broken issuer signature, or an algorithm it does not take or that misfits the key, is refused at issuer_signature', async () => {
    const cases: [string, RegExp][] = [
      [breakSignature(mdoc), /issuer's signature \(issuerAuth\) does not verify/],
      // EdDSA named over a P-256 document signer; RS256, which the verifier does not list.
      [
        (await reissue(identity, mdoc, { alg: -8 })).value,
        /EdDSA \(-8\) does not fit its issuer's certificate key/,
      ],
      [
        (await reissue(identity, mdoc, { alg: -257 })).value,
        /algorithm unknown \(-257\) is not ES256 \(-7\)/,
      ],
      [(await reissue(identity, mdoc, { x5chain: false })).value, /carries no x5chain certificate/],
    ];
    for (const [value, detail] of cases) {
      const presentation = presentMdoc(value, {
        disclose: ['given_name'],
        transcript: transcriptOf(handover),
        device,
      });
      const result = await verifyMdocPresentation(presentation, expected());
      assertRefusedAt(result, 'issuer_signature', detail);
    }
  });

  test('an issuer whose chain reaches none of the trust anchors is refused at issuer_trusted, and shown untrusted', async () => {
    const presentation = presentMdoc(mdoc, {
      disclose: ['given_name'],
      transcript: transcriptOf(handover),
      device,
    });
    const stranger = await makeIssuerIdentity('Another Issuer');
    for (const anchors of [[], [new X509Certificate(der(stranger.ca.der))]]) {
      const result = await verifyMdocPresentation(presentation, expected({ issuerTrustAnchors: anchors }));
      assertRefusedAt(result, 'issuer_trusted', /does not chain to a trusted issuer certificate/);
      assert.equal(result.issuer?.trusted, false);
      assert.equal(result.issuer?.certificate?.trusted, false);
      assert.match(result.issuer!.id, /CN=Example Issuer Document Signer/);
    }
    // The document signer's certificate has expired by then, though the chain reaches the anchor.
    const later = new Date(Date.now() + 48 * 3600_000);
    assertRefusedAt(
      await verifyMdocPresentation(presentation, expected({ now: later })),
      'issuer_trusted',
      /is not valid at/,
    );
  });

  test('an expired MSO, or one not yet valid, is refused at validity', async () => {
    const now = Date.now();
    const whole = (time: number) => new Date(Math.floor(time / 1000) * 1000);
    const expired = await issueMdoc(identity, {
      deviceJwk: device.publicJwk,
      elements: ELEMENTS,
      signed: whole(now - 30 * 60_000),
      validFrom: whole(now - 30 * 60_000),
      validUntil: whole(now - 10 * 60_000),
    });
    const early = await issueMdoc(identity, {
      deviceJwk: device.publicJwk,
      elements: ELEMENTS,
      validFrom: whole(now + 10 * 60_000),
    });
    for (const [value, detail] of [
      [expired, /expired at .*validUntil/],
      [early, /not valid before .*validFrom/],
    ] as const) {
      const presentation = presentMdoc(value, {
        disclose: ['given_name'],
        transcript: transcriptOf(handover),
        device,
      });
      assertRefusedAt(await verifyMdocPresentation(presentation, expected()), 'validity', detail);
    }
  });

  test('a DeviceMac is refused as unsupported; a missing deviceSigned passes only without holder binding', async () => {
    const mac = presentMdoc(mdoc, {
      disclose: ['given_name'],
      transcript: transcriptOf(handover),
      device,
      deviceAuth: 'mac',
    });
    assertRefusedAt(await verifyMdocPresentation(mac, expected()), 'device_signature', /DeviceMac/);

    const unbound = presentMdoc(mdoc, {
      disclose: ['given_name'],
      transcript: transcriptOf(handover),
      device,
      deviceAuth: 'none',
    });
    assertRefusedAt(
      await verifyMdocPresentation(unbound, expected()),
      'device_signature',
      /no deviceSigned, and the query requires cryptographic holder binding/,
    );
    const result = await verifyMdocPresentation(unbound, expected({ holderBinding: false }));
    assert.equal(result.ok, true);
    assert.deepEqual(names(result), CHECK_NAMES.slice(0, -1));
  });

  test('a status_list entry in the MSO is the status reference, with the document signer key', async () => {
    const { value } = await reissue(identity, mdoc, {
      mso: (mso) => {
        mso.set(
          'status',
          new Map([
            [
              'status_list',
              new Map<string, unknown>([
                ['idx', 412],
                ['uri', 'https://issuer.example/statuslists/1'],
              ]),
            ],
          ]),
        );
      },
    });
    const presentation = presentMdoc(value, {
      disclose: ['given_name'],
      transcript: transcriptOf(handover),
      device,
    });
    const result = await verifyMdocPresentation(presentation, expected());
    assert.equal(result.ok, true, JSON.stringify(result.checks));
    assert.equal(result.statusReference?.list, 'token');
    assert.equal(result.statusReference?.uri, 'https://issuer.example/statuslists/1');
    assert.equal(result.statusReference?.index, 412);
    const issuerKey = result.statusReference?.issuerKey;
    assert.ok(issuerKey?.kind === 'jose');
    assert.deepEqual(
      (issuerKey.key as KeyObject).export({ format: 'jwk' }),
      new X509Certificate(der(identity.signer.der)).publicKey.export({ format: 'jwk' }),
    );
  });

  test('what is not one DeviceResponse document is refused at format, never thrown', async () => {
    const good = presentMdoc(mdoc, { disclose: ['given_name'], transcript: transcriptOf(handover), device });
    const response = cborDecode(base64url.decode(good)) as Map<string, unknown>;
    const withResponse = (change: (copy: Map<string, unknown>) => void) => {
      const copy = new Map(response);
      change(copy);
      return base64url.encode(cborEncode(copy));
    };
    const cases: [unknown, RegExp][] = [
      [42, /base64url \(no padding\) of a CBOR DeviceResponse/],
      [{ vp: good }, /base64url/],
      ['', /base64url/],
      ['not base64url!', /base64url/],
      [`${good}==`, /base64url/],
      [[good], /base64url/],
      [base64url.encode(randomBytes(3).fill(0xff)), /not CBOR/],
      [base64url.encode(base64url.decode(good).subarray(0, 100)), /not CBOR/],
      [base64url.encode(cborg.encode(['version', '1.0'])), /not a DeviceResponse/],
      [withResponse((copy) => copy.set('status', 10)), /status is 10, not 0/],
      [withResponse((copy) => copy.delete('documents')), /holds no document/],
      [withResponse((copy) => copy.set('documents', [])), /holds no document/],
      [
        presentMdoc(mdoc, {
          disclose: ['given_name'],
          transcript: transcriptOf(handover),
          device,
          extraDocuments: 1,
        }),
        /holds 2 documents; a vp_token entry presents exactly one/,
      ],
      [withResponse((copy) => copy.set('documents', ['document'])), /is not a Document/],
      [
        withResponse((copy) => copy.set('documents', [new Map([['docType', MDL_DOCTYPE]])])),
        /not an IssuerSigned structure/,
      ],
      [
        withResponse((copy) => {
          const document = new Map((copy.get('documents') as Map<string, unknown>[])[0]);
          document.set('deviceSigned', new Map([['deviceAuth', new Map()]]));
          copy.set('documents', [document]);
        }),
        /deviceSigned is not DeviceSigned/,
      ],
    ];
    for (const [presented, detail] of cases) {
      const result = await verifyMdocPresentation(presented, expected());
      assertRefusedAt(result, 'format', detail);
      assert.deepEqual(
        {
          issuer: result.issuer,
          summary: result.summary,
          dcqlInput: result.dcqlInput,
          status: result.statusReference,
        },
        { issuer: null, summary: null, dcqlInput: null, status: null },
      );
    }
  });

  test('a malformed DeviceSignature is a failed check with a sentence, not an exception', async () => {
    const good = presentMdoc(mdoc, { disclose: ['given_name'], transcript: transcriptOf(handover), device });
    const response = cborDecode(base64url.decode(good)) as Map<string, unknown>;
    const withDeviceSignature = (sign1: unknown) => {
      const document = new Map((response.get('documents') as Map<string, unknown>[])[0]);
      const deviceSigned = new Map(document.get('deviceSigned') as Map<string, unknown>);
      deviceSigned.set('deviceAuth', new Map([['deviceSignature', sign1]]));
      document.set('deviceSigned', deviceSigned);
      return base64url.encode(cborEncode(new Map([...response, ['documents', [document]]])));
    };
    const protectedHeader = cborg.encode(new Map([[1, -7]]));
    const cases: [unknown, RegExp][] = [
      ['signature', /holds no DeviceSignature/],
      [[protectedHeader, new Map(), null], /holds no DeviceSignature/],
      [[protectedHeader, new Map(), new Uint8Array([1]), new Uint8Array(64)], /carries a payload/],
      [[new Uint8Array([0xff]), new Map(), null, new Uint8Array(64)], /protected header is not CBOR/],
      [
        [cborg.encode(new Map()), new Map(), null, new Uint8Array(64)],
        /algorithm \(none in the protected header\)/,
      ],
      [[cborg.encode(new Map([[1, -257]])), new Map(), null, new Uint8Array(64)], /RS256|unknown \(-257\)/],
      [[protectedHeader, new Map(), null, new Uint8Array(3)], /does not verify/],
    ];
    for (const [sign1, detail] of cases) {
      assertRefusedAt(
        await verifyMdocPresentation(withDeviceSignature(sign1), expected()),
        'device_signature',
        detail,
      );
    }
  });
});
