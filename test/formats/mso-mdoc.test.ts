import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, type JsonWebKey, randomBytes, X509Certificate } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { base64url, DateOnly, Holder, Verifier } from '@owf/mdoc';
import * as cborg from 'cborg';
import { calculateJwkThumbprint } from 'jose';
import { CofferError } from '../../src/errors.ts';
import type { Audience, HolderKey, ParseContext } from '../../src/formats/credential-format.ts';
import { msoMdocFormat } from '../../src/formats/mso-mdoc/index.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import {
  alterElement,
  breakSignature,
  issueMdoc,
  MDL_DOCTYPE,
  MDL_NAMESPACE,
  reissue,
  testMdocContext,
} from '../helpers/issuers/mdoc-issuer.ts';
import { fingerprintOf, keyIdentifierOf } from '../oid4vp/certificates.ts';

/**
 * The mso_mdoc format on its own: mdocs made by the test issuer (@owf/mdoc's Issuer with the
 * test's own crypto), presentations checked with @owf/mdoc's Verifier against a SessionTranscript
 * this test computes with cborg, and the DeviceResponse read with cborg.
 */

const EXAMPLE_NAMESPACE = 'org.example.1';
const ELEMENTS = {
  [MDL_NAMESPACE]: {
    given_name: 'Ada',
    family_name: 'Lovelace',
    birth_date: new DateOnly('1815-12-10'),
    age_over_18: true,
    nationality: 'GB',
    portrait: new Uint8Array([1, 2, 3, 255]),
    driving_privileges: [{ vehicle_category_code: 'B', issue_date: new DateOnly('2020-01-02') }],
  },
  [EXAMPLE_NAMESPACE]: {
    'a/b~c': 'a name with a slash and a tilde',
    last_seen: new Date('2024-05-06T07:08:09Z'),
    score: 7,
  },
};
const CLAIMS = {
  [MDL_NAMESPACE]: {
    given_name: 'Ada',
    family_name: 'Lovelace',
    birth_date: '1815-12-10',
    age_over_18: true,
    nationality: 'GB',
    portrait: 'AQID_w',
    driving_privileges: [{ vehicle_category_code: 'B', issue_date: '2020-01-02' }],
  },
  [EXAMPLE_NAMESPACE]: {
    'a/b~c': 'a name with a slash and a tilde',
    last_seen: '2024-05-06T07:08:09.000Z',
    score: 7,
  },
};

interface Keys {
  publicJwk: JsonWebKey;
  holder: HolderKey;
}

function holderKeys(kind: 'ed25519' | 'P-256'): Keys {
  const { privateKey, publicKey } =
    kind === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    publicJwk: publicKey.export({ format: 'jwk' }),
    holder: { did: 'did:key:z6Mk-test', privateJwk: privateKey.export({ format: 'jwk' }) },
  };
}

const der = (base64: string) => new Uint8Array(Buffer.from(base64, 'base64'));
const second = (time: number) => new Date(Math.floor(time / 1000) * 1000);

function contextOf(identity: IssuerIdentity, trusted = true): ParseContext {
  return {
    now: new Date(),
    issuerTrustAnchors: trusted ? [new X509Certificate(der(identity.ca.der))] : [],
  };
}

/** A 422 refusal whose sentence matches. */
const refusal = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof CofferError, String(error));
  assert.equal(error.code, 'invalid_credential');
  assert.equal(error.status, 422);
  assert.match(error.message, /^The credential was refused: /);
  assert.match(error.message, pattern);
  return true;
};

/** CBOR read with cborg: maps as Maps, tag 24 as its embedded bytes, dates as their strings. */
const TAGS: cborg.TagDecoder[] = [];
TAGS[0] = (text: string) => text;
TAGS[24] = (bytes: Uint8Array) => ({ embedded: bytes });
TAGS[1004] = (text: string) => text;
const read = (bytes: Uint8Array) => cborg.decode(bytes, { useMaps: true, tags: TAGS });
type CborMap = Map<unknown, unknown>;

/** The OpenID4VP 1.0 SessionTranscript for redirects (B.2.6.1), computed here with cborg. */
function transcriptOf(audience: Audience): Uint8Array {
  const info = cborg.encode([
    audience.clientId,
    audience.nonce,
    audience.encryptionJwkThumbprint,
    audience.responseUri,
  ]);
  const hash = new Uint8Array(createHash('sha256').update(info).digest());
  return cborg.encode([null, null, ['OpenID4VPHandover', hash]]);
}

const verifyPresentation = (presentation: string, identity: IssuerIdentity, transcript: Uint8Array) =>
  Verifier.verifyDeviceResponse(
    {
      deviceResponse: base64url.decode(presentation),
      sessionTranscript: transcript,
      trustedCertificates: [der(identity.ca.der)],
    },
    testMdocContext,
  );

/** The one document of a DeviceResponse, read with cborg. */
function documentOf(presentation: string) {
  const response = read(base64url.decode(presentation)) as CborMap;
  assert.equal(response.get('version'), '1.0');
  assert.equal(response.get('status'), 0);
  const documents = response.get('documents') as CborMap[];
  assert.equal(documents.length, 1);
  return { response, document: documents[0]! };
}

/** The element identifiers a DeviceResponse discloses, by namespace. */
function disclosedIn(presentation: string): Record<string, string[]> {
  const { document } = documentOf(presentation);
  const namespaces = (document.get('issuerSigned') as CborMap).get('nameSpaces') as Map<
    string,
    { embedded: Uint8Array }[]
  >;
  return Object.fromEntries(
    [...namespaces].map(([namespace, items]) => [
      namespace,
      items.map((item) => (read(item.embedded) as CborMap).get('elementIdentifier') as string).sort(),
    ]),
  );
}

describe('mso_mdoc credential format', () => {
  let identity: IssuerIdentity;
  let ed: Keys;
  let mdoc: string;

  before(async () => {
    identity = await makeIssuerIdentity();
    ed = holderKeys('ed25519');
    mdoc = await issueMdoc(identity, { deviceJwk: ed.publicJwk, namespaces: ELEMENTS });
  });

  test('a genuine mdoc is accepted, with its summary, its holder key and its issuer certificate', async () => {
    assert.equal(msoMdocFormat.id, 'mso_mdoc');
    assert.equal(msoMdocFormat.disclosesEverything, false);
    assert.equal(msoMdocFormat.recognises(mdoc), true);
    for (const other of ['eyJhbGciOiJFUzI1NiJ9.e30.c2ln~', { vc: mdoc }, 42, 'not base64url!', 'AAAA']) {
      assert.equal(msoMdocFormat.recognises(other), false, String(other));
    }

    const context = contextOf(identity);
    const parsed = msoMdocFormat.parse(mdoc, context);
    await parsed.verify();

    const issuerAuth = (read(base64url.decode(mdoc)) as CborMap).get('issuerAuth');
    const signer = new X509Certificate(der(identity.signer.der));
    const certificate = {
      subject: signer.subject.replaceAll('\n', ', '),
      issuer: new X509Certificate(der(identity.ca.der)).subject.replaceAll('\n', ', '),
      fingerprint: fingerprintOf(identity.signer),
      notAfter: new Date(signer.validTo).toISOString(),
      trusted: true,
    };
    assert.match(certificate.subject, /CN=Example Issuer Document Signer/);
    const mso = read(
      (read((issuerAuth as Uint8Array[])[2]!) as { embedded: Uint8Array }).embedded,
    ) as CborMap;
    const validity = mso.get('validityInfo') as CborMap;
    assert.deepEqual(parsed.summary, {
      format: 'mso_mdoc',
      id: createHash('sha256').update(cborg.encode(issuerAuth)).digest('base64url'),
      issuer: certificate.subject,
      type: MDL_DOCTYPE,
      validFrom: new Date(validity.get('validFrom') as string).toISOString(),
      validUntil: new Date(validity.get('validUntil') as string).toISOString(),
      claims: CLAIMS,
      issuerCertificate: certificate,
    });
    assert.deepEqual(parsed.holder, { kind: 'key', jwk: ed.publicJwk });
    assert.equal(parsed.stored, mdoc);

    assert.deepEqual(msoMdocFormat.summarize(mdoc, context), parsed.summary);
    const untrusted = msoMdocFormat.summarize(mdoc, contextOf(identity, false));
    assert.equal(untrusted.issuerCertificate?.trusted, false);
    assert.equal(
      msoMdocFormat.parse(mdoc, contextOf(identity, false)).summary.issuerCertificate?.trusted,
      false,
    );

    const { format, id, issuer, type, validFrom, validUntil, claims } = parsed.summary;
    assert.deepEqual(msoMdocFormat.listEntry(mdoc, parsed.summary), {
      format,
      id,
      issuer,
      type,
      validFrom,
      validUntil,
      claims,
      credential: mdoc,
    });
    assert.deepEqual(await msoMdocFormat.dcqlInput(mdoc, parsed.summary), {
      credential_format: 'mso_mdoc',
      doctype: MDL_DOCTYPE,
      namespaces: CLAIMS,
      // The signer's authority key identifier: its CA's key (DCQL trusted_authorities, aki).
      authority: { type: 'aki', values: [await keyIdentifierOf(identity.ca)] },
    });
  });

  test('another doctype, a P-256 device key, and ESP256 (-9) over the issuer key are accepted', async () => {
    const p256 = holderKeys('P-256');
    const value = await issueMdoc(identity, {
      deviceJwk: p256.publicJwk,
      doctype: 'eu.europa.ec.eudi.pid.1',
      namespaces: { 'eu.europa.ec.eudi.pid.1': { family_name: 'Lovelace' } },
      algorithm: -9,
    });
    const parsed = msoMdocFormat.parse(value, contextOf(identity));
    await parsed.verify();
    assert.equal(parsed.summary.type, 'eu.europa.ec.eudi.pid.1');
    assert.deepEqual(parsed.summary.claims, { 'eu.europa.ec.eudi.pid.1': { family_name: 'Lovelace' } });
    const { kty, crv, x, y } = p256.publicJwk;
    assert.deepEqual(parsed.holder, { kind: 'key', jwk: { kty, crv, x, y } });
  });

  test('an element changed after issuance is refused with a sentence naming it', async () => {
    const context = contextOf(identity);
    for (const [namespace, element, value] of [
      [MDL_NAMESPACE, 'family_name', 'Byron'],
      [MDL_NAMESPACE, 'age_over_18', false],
      [EXAMPLE_NAMESPACE, 'score', 8],
    ] as const) {
      const altered = alterElement(mdoc, namespace, element, value);
      const parsed = msoMdocFormat.parse(altered, context);
      assert.equal((parsed.summary.claims[namespace] as Record<string, unknown>)[element], value);
      await assert.rejects(
        parsed.verify(),
        refusal(
          new RegExp(`its element ${namespace.replaceAll('.', '\\.')}/${element} does not match the digest`),
        ),
      );
    }
  });

  test("a broken issuer signature, or an algorithm that does not fit the issuer's key, is refused", async () => {
    const context = contextOf(identity);
    await assert.rejects(
      msoMdocFormat.parse(breakSignature(mdoc), context).verify(),
      refusal(/its issuer's signature \(issuerAuth\) does not verify/),
    );
    // EdDSA named over a P-256 document signer.
    const { value } = await reissue(identity, mdoc, { alg: -8 });
    await assert.rejects(
      msoMdocFormat.parse(value, context).verify(),
      refusal(/its issuerAuth algorithm EdDSA \(-8\) does not fit its issuer's certificate key/),
    );
  });

  test('validityInfo: not yet valid or expired is refused naming the date; 60 s of skew is allowed', async () => {
    const now = Date.now();
    const context = contextOf(identity);
    const expired = await issueMdoc(identity, {
      deviceJwk: ed.publicJwk,
      signed: second(now - 30 * 60_000),
      validFrom: second(now - 30 * 60_000),
      validUntil: second(now - 10 * 60_000),
    });
    assert.throws(
      () => msoMdocFormat.parse(expired, context),
      refusal(new RegExp(`it expired at ${second(now - 10 * 60_000).toISOString()}`)),
    );
    const early = await issueMdoc(identity, {
      deviceJwk: ed.publicJwk,
      validFrom: second(now + 10 * 60_000),
    });
    assert.throws(
      () => msoMdocFormat.parse(early, context),
      refusal(new RegExp(`it is not valid before ${second(now + 10 * 60_000).toISOString()}`)),
    );
    const justExpired = await issueMdoc(identity, {
      deviceJwk: ed.publicJwk,
      validUntil: second(now - 20_000),
    });
    await msoMdocFormat.parse(justExpired, context).verify();
  });

  test('what is not an IssuerSigned is refused (422) with a sentence saying what is wrong', () => {
    const context = contextOf(identity);
    const bytes = base64url.decode(mdoc);
    const cases: [unknown, RegExp][] = [
      [42, /base64url \(no padding\) of the CBOR IssuerSigned/],
      [{ issuerAuth: [] }, /base64url \(no padding\) of the CBOR IssuerSigned/],
      ['', /base64url \(no padding\) of the CBOR IssuerSigned/],
      ['not base64url!', /base64url \(no padding\) of the CBOR IssuerSigned/],
      [`${mdoc}==`, /base64url \(no padding\) of the CBOR IssuerSigned/],
      [base64url.encode(bytes.subarray(0, bytes.length - 40)), /it is not CBOR/],
      [base64url.encode(bytes.subarray(0, 50)), /it is not CBOR/],
      [base64url.encode(cborg.encode(['issuerAuth'])), /not an IssuerSigned structure/],
      [base64url.encode(cborg.encode(new Map([['nameSpaces', new Map()]]))), /not an IssuerSigned structure/],
      [
        base64url.encode(cborg.encode(new Map<string, unknown>([['issuerAuth', 'signed']]))),
        /its issuerAuth is not a COSE_Sign1 structure/,
      ],
      [
        base64url.encode(
          cborg.encode(
            new Map<string, unknown>([
              ['nameSpaces', new Map([['ns', [1]]])],
              ['issuerAuth', []],
            ]),
          ),
        ),
        /its nameSpaces is not a map of namespaces to arrays of IssuerSignedItemBytes/,
      ],
    ];
    for (const [value, pattern] of cases) {
      assert.throws(() => msoMdocFormat.parse(value, context), refusal(pattern), String(value).slice(0, 40));
      assert.throws(() => msoMdocFormat.summarize(value, context), refusal(pattern));
      assert.equal(msoMdocFormat.recognises(value), false);
    }
  });

  test('an MSO with an unsupported digest or signature algorithm, or no x5chain, is refused naming it', async () => {
    const context = contextOf(identity);
    const sha1 = await reissue(identity, mdoc, { mso: (mso) => mso.set('digestAlgorithm', 'SHA-1') });
    assert.throws(
      () => msoMdocFormat.parse(sha1.value, context),
      refusal(/its digest algorithm SHA-1 is not SHA-256, SHA-384 or SHA-512/),
    );
    const ps256 = await reissue(identity, mdoc, { alg: -37 });
    assert.throws(
      () => msoMdocFormat.parse(ps256.value, context),
      refusal(/its issuerAuth algorithm -37 is not one of ES256 \(-7\)/),
    );
    const withoutChain = await reissue(identity, mdoc, { x5chain: false });
    assert.throws(
      () => msoMdocFormat.parse(withoutChain.value, context),
      refusal(/its issuerAuth carries no x5chain certificate/),
    );
  });

  test("an issuer's own CBOR encoding (another encoder than the library's) is verified and presented byte for byte", async () => {
    // cborg writes 1.5 as a half-precision float; @owf/mdoc re-encodes items (as a double) before
    // hashing them, so the library on its own refuses this genuine mdoc.
    const { value, elementBytes } = await reissue(identity, mdoc, {
      element: { namespace: EXAMPLE_NAMESPACE, element: 'score', value: 1.5 },
    });
    await assert.rejects(
      Holder.verifyIssuerSigned(
        { issuerSigned: value, disableCertificateChainValidation: true },
        testMdocContext,
      ),
    );
    const parsed = msoMdocFormat.parse(value, contextOf(identity));
    await parsed.verify();
    assert.equal((parsed.summary.claims[EXAMPLE_NAMESPACE] as Record<string, unknown>)['score'], 1.5);

    const presentation = (await msoMdocFormat.present({
      stored: value,
      disclosed: [`/${EXAMPLE_NAMESPACE}/score`],
      holder: ed.holder,
      audience: {
        clientId: 'redirect_uri:https://verifier.example/cb',
        nonce: 'n-0S6_WzA2Mj',
        responseUri: 'https://verifier.example/cb',
        encryptionJwkThumbprint: null,
      },
    })) as string;
    const { document } = documentOf(presentation);
    const issuerSigned = document.get('issuerSigned') as CborMap;
    const [item] = (issuerSigned.get('nameSpaces') as Map<string, { embedded: Uint8Array }[]>).get(
      EXAMPLE_NAMESPACE,
    )!;
    assert.equal(Buffer.from(item!.embedded).toString('hex'), Buffer.from(elementBytes!).toString('hex'));
    const storedIssuerAuth = (read(base64url.decode(value)) as CborMap).get('issuerAuth');
    assert.equal(
      Buffer.from(cborg.encode(issuerSigned.get('issuerAuth'))).toString('hex'),
      Buffer.from(cborg.encode(storedIssuerAuth)).toString('hex'),
    );
  });

  test('a presentation holds only the requested elements, signed by the device key over the OpenID4VP transcript', async () => {
    const thumbprint = new Uint8Array(
      Buffer.from(
        await calculateJwkThumbprint(
          generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as never,
          'sha256',
        ),
        'base64url',
      ),
    );
    for (const encryptionJwkThumbprint of [null, thumbprint]) {
      const audience: Audience = {
        clientId: 'x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk',
        nonce: randomBytes(16).toString('base64url'),
        responseUri: 'https://verifier.example/response',
        encryptionJwkThumbprint,
      };
      const presentation = await msoMdocFormat.present({
        stored: mdoc,
        disclosed: [
          `/${MDL_NAMESPACE}/given_name`,
          `/${MDL_NAMESPACE}/age_over_18`,
          `/${MDL_NAMESPACE}/given_name`,
          `/${EXAMPLE_NAMESPACE}/a~1b~0c`,
        ],
        holder: ed.holder,
        audience,
      });
      assert.equal(typeof presentation, 'string');
      assert.match(presentation as string, /^[A-Za-z0-9_-]+$/);
      await verifyPresentation(presentation as string, identity, transcriptOf(audience));
      assert.deepEqual(disclosedIn(presentation as string), {
        [MDL_NAMESPACE]: ['age_over_18', 'given_name'],
        [EXAMPLE_NAMESPACE]: ['a/b~c'],
      });

      const { document } = documentOf(presentation as string);
      assert.equal(document.get('docType'), MDL_DOCTYPE);
      const deviceSigned = document.get('deviceSigned') as CborMap;
      assert.deepEqual(
        read((deviceSigned.get('nameSpaces') as { embedded: Uint8Array }).embedded),
        new Map(),
      );
      const deviceAuth = deviceSigned.get('deviceAuth') as CborMap;
      assert.deepEqual([...deviceAuth.keys()], ['deviceSignature']);
      const [protectedHeader, , payload] = deviceAuth.get('deviceSignature') as [Uint8Array, CborMap, null];
      assert.deepEqual(read(protectedHeader), new Map([[1, -8]]));
      assert.equal(payload, null);

      // Bound to this request: another nonce, or the other thumbprint choice, does not verify.
      await assert.rejects(
        verifyPresentation(presentation as string, identity, transcriptOf({ ...audience, nonce: 'other' })),
      );
      await assert.rejects(
        verifyPresentation(
          presentation as string,
          identity,
          transcriptOf({ ...audience, encryptionJwkThumbprint: encryptionJwkThumbprint ? null : thumbprint }),
        ),
      );
    }
  });

  test('a P-256 device key signs its presentation with ES256', async () => {
    const p256 = holderKeys('P-256');
    const value = await issueMdoc(identity, { deviceJwk: p256.publicJwk });
    const audience: Audience = {
      clientId: 'redirect_uri:https://verifier.example/cb',
      nonce: 'abc',
      responseUri: 'https://verifier.example/cb',
      encryptionJwkThumbprint: null,
    };
    const presentation = (await msoMdocFormat.present({
      stored: value,
      disclosed: [`/${MDL_NAMESPACE}/nationality`],
      holder: p256.holder,
      audience,
    })) as string;
    await verifyPresentation(presentation, identity, transcriptOf(audience));
    assert.deepEqual(disclosedIn(presentation), { [MDL_NAMESPACE]: ['nationality'] });
    const { document } = documentOf(presentation);
    const deviceAuth = (document.get('deviceSigned') as CborMap).get('deviceAuth') as CborMap;
    const [protectedHeader] = deviceAuth.get('deviceSignature') as [Uint8Array];
    assert.deepEqual(read(protectedHeader), new Map([[1, -7]]));
  });

  test('a presentation needs the device key, and only names elements the mdoc holds', async () => {
    const audience: Audience = {
      clientId: 'redirect_uri:https://verifier.example/cb',
      nonce: 'abc',
      responseUri: 'https://verifier.example/cb',
      encryptionJwkThumbprint: null,
    };
    const present = (disclosed: string[], holder: HolderKey | null) =>
      msoMdocFormat.present({ stored: mdoc, disclosed, holder, audience });
    await assert.rejects(present([`/${MDL_NAMESPACE}/given_name`], null), /signed by its device key/);
    await assert.rejects(
      present([`/${MDL_NAMESPACE}/given_name`], holderKeys('ed25519').holder),
      /not this mdoc's device key/,
    );
    await assert.rejects(present([`/${MDL_NAMESPACE}/height`], ed.holder), /holds no element/);
    await assert.rejects(present([`/${MDL_NAMESPACE}`], ed.holder), /names no mdoc element/);
  });

  test('verifierCanVerify honours issuerauth_alg_values and deviceauth_alg_values, fully specified names too', async () => {
    const can = (value: string, parameters: Record<string, unknown> | undefined, holderBinding = true) =>
      msoMdocFormat.verifierCanVerify(value, parameters, holderBinding);
    // ES256 over P-256 by the issuer, an Ed25519 device key.
    assert.equal(can(mdoc, undefined), false);
    assert.equal(can(mdoc, {}), true);
    assert.equal(can(mdoc, { issuerauth_alg_values: [-7] }), true);
    assert.equal(can(mdoc, { issuerauth_alg_values: [-9] }), true);
    assert.equal(can(mdoc, { issuerauth_alg_values: [-35, -36] }), false);
    assert.equal(can(mdoc, { issuerauth_alg_values: [-8, -19] }), false);
    assert.equal(can(mdoc, { deviceauth_alg_values: [-8] }), true);
    assert.equal(can(mdoc, { deviceauth_alg_values: [-19] }), true);
    assert.equal(can(mdoc, { deviceauth_alg_values: [-7, -9] }), false);
    assert.equal(can(mdoc, { deviceauth_alg_values: [-7] }, false), false);
    assert.equal(can(mdoc, { issuerauth_alg_values: [-9], deviceauth_alg_values: [-19] }), true);
    assert.equal(can(mdoc, { issuerauth_alg_values: [-9], deviceauth_alg_values: [-65537] }), false);

    const p256 = await issueMdoc(identity, { deviceJwk: holderKeys('P-256').publicJwk, algorithm: -9 });
    assert.equal(can(p256, { deviceauth_alg_values: [-7] }), true);
    assert.equal(can(p256, { deviceauth_alg_values: [-9] }), true);
    assert.equal(can(p256, { deviceauth_alg_values: [-8, -19] }), false);
    assert.equal(can(p256, { issuerauth_alg_values: [-7] }), true);
    assert.equal(can(p256, { issuerauth_alg_values: [-9] }), true);
  });
});
