import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import * as Ed25519Multikey from '@digitalbazaar/ed25519-multikey';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { fastBbs } from '../../../src/bbs/index.ts';
import { inProcessOperations } from '../../../src/formats/ldp-vc/bbs-2023/operations.ts';
import { createDocumentLoader } from '../../../src/formats/ldp-vc/contexts/document-loader.ts';
import { createLdpPresentationVerifier } from '../../../src/formats/ldp-vc/verify-presentation.ts';
import type {
  PresentationExpectation,
  VerifiedPresentation,
} from '../../../src/formats/presentation-verification.ts';
import {
  createStockHolder,
  createStockIssuer,
  deriveWithStock,
  type StockHolder as Holder,
  PERSON_CONTEXT,
  PERSON_CONTEXT_URL,
  personCredential,
  type StockIssuer,
  signPresentationWithStock,
  stockDocumentLoader,
} from '../../credentials/stock-issuer.ts';
import { readVector, vectorJsonLd } from './vectors.ts';

/**
 * The ldp_vc verifier side on its own. Everything it checks is made by the stock Digital Bazaar
 * stack, never by Coffer's wallet: credentials issued and derived with
 * @digitalbazaar/bbs-2023-cryptosuite, presentations signed by an Ed25519 did:key holder with
 * @digitalbazaar/vc's signPresentation and eddsa-rdfc-2022.
 */

// biome-ignore lint/suspicious/noExplicitAny: presentations are arbitrary JSON-LD
type Json = any;

const CLIENT_ID = 'x509_san_dns:verifier.example';
const NONCE = 'n-0S6_WzA2Mj';
const STATUS_LIST = 'https://issuer.example/status/7';
const ALL_CHECKS = [
  'format',
  'issuer_signature',
  'issuer_trusted',
  'validity',
  'holder_binding',
  'subject_binding',
  'nonce',
  'audience',
];

const jsonLd = {
  documentLoader: createDocumentLoader(async (url) =>
    url === PERSON_CONTEXT_URL ? PERSON_CONTEXT : undefined,
  ),
};
const verify = createLdpPresentationVerifier({
  operations: inProcessOperations({ bbs: fastBbs, jsonLd }),
  jsonLd,
});

function expectation(
  issuer: StockIssuer,
  overrides: Partial<PresentationExpectation> = {},
): PresentationExpectation {
  return {
    audience: {
      clientId: CLIENT_ID,
      nonce: NONCE,
      responseUri: 'https://verifier.example/response',
      encryptionJwkThumbprint: null,
    },
    now: new Date(),
    issuerTrustAnchors: [],
    trustedIssuerDids: [issuer.did],
    holderBinding: true,
    transactionData: [],
    maxAgeSeconds: 300,
    ...overrides,
  };
}

/** A VP of one credential signed by `signer`, bound to this file's verifier unless told otherwise. */
const signVp = (
  credential: object,
  holder: string,
  signer: Holder['key'],
  binding: { challenge?: string; domain?: string } = {},
): Promise<Json> =>
  signPresentationWithStock(credential, holder, signer, {
    challenge: binding.challenge ?? NONCE,
    domain: binding.domain ?? CLIENT_ID,
  });

const names = (result: VerifiedPresentation) => result.checks.map((check) => check.name);

/** A result that fails at `name`, every check before it having passed, with a sentence. */
function assertRefusedAt(result: VerifiedPresentation, name: string, detail?: RegExp) {
  assert.equal(result.ok, false);
  const last = result.checks.at(-1)!;
  assert.equal(last.name, name, `refused at ${last.name}: ${last.detail}`);
  assert.equal(last.ok, false);
  assert.ok(result.checks.slice(0, -1).every((check) => check.ok));
  assert.match(last.detail ?? '', /^[A-Z].*\.$/, 'the detail is one sentence');
  if (detail) assert.match(last.detail!, detail);
}

describe('ldp_vc presentations, verifier side', () => {
  let issuer: StockIssuer;
  let holder: Holder;
  let signed: Json;
  let derived: Json;

  before(async () => {
    issuer = await createStockIssuer();
    holder = await createStockHolder();
    signed = await issuer.issue(
      personCredential(issuer.did, holder.did, undefined, {
        validUntil: '2099-01-01T00:00:00Z',
        credentialStatus: {
          id: `${STATUS_LIST}#42`,
          type: 'BitstringStatusListEntry',
          statusPurpose: 'revocation',
          statusListIndex: '42',
          statusListCredential: STATUS_LIST,
        },
      }),
    );
    derived = await deriveWithStock(
      signed,
      ['/credentialSubject/id', '/credentialSubject/first_name', '/validUntil', '/credentialStatus'],
      new Uint8Array(),
    );
  });

  test('a holder-signed presentation passes every check, and only what was disclosed is read', async () => {
    const result = await verify(await signVp(derived, holder.did, holder.key), expectation(issuer));
    assert.equal(result.ok, true, JSON.stringify(result.checks));
    assert.deepEqual(
      result.checks,
      ALL_CHECKS.map((name) => ({ name, ok: true })),
    );
    assert.deepEqual(result.issuer, { id: issuer.did, trusted: true, certificate: null });
    const subject = result.summary!.claims['credentialSubject'];
    assert.deepEqual(subject, { id: holder.did, first_name: 'Ada' });
    assert.equal(result.summary!.claims['proof'], undefined);
    assert.equal(result.summary!.validUntil, '2099-01-01T00:00:00Z');
    assert.equal(result.dcqlInput!.credential_format, 'ldp_vc');
    assert.deepEqual((result.dcqlInput as { type: string[] }).type.sort(), [
      'https://issuer.example/vocab#PersonCredential',
      'https://www.w3.org/2018/credentials#VerifiableCredential',
    ]);
    assert.deepEqual(result.statusReference, {
      list: 'bitstring',
      uri: STATUS_LIST,
      index: 42,
      purpose: 'revocation',
      issuerKey: { kind: 'bbs', publicKey: issuer.publicKey, issuer: issuer.did },
    });
  });

  test('a derived proof with a presentation header of the wallet’s choosing is accepted: the holder’s signature binds it', async () => {
    const withHeader = await deriveWithStock(signed, ['/credentialSubject/id'], Uint8Array.of(1, 2, 3));
    const result = await verify(await signVp(withHeader, holder.did, holder.key), expectation(issuer));
    assert.equal(result.ok, true, JSON.stringify(result.checks));
  });

  test('a presentation bound to another nonce is refused at nonce', async () => {
    const vp = await signVp(derived, holder.did, holder.key, { challenge: 'another-nonce' });
    assertRefusedAt(await verify(vp, expectation(issuer)), 'nonce', /another-nonce/);
  });

  test('a presentation bound to another verifier is refused at audience', async () => {
    const vp = await signVp(derived, holder.did, holder.key, { domain: 'x509_san_dns:other.example' });
    assertRefusedAt(await verify(vp, expectation(issuer)), 'audience', /other\.example/);
  });

  test('a disclosed claim altered (and the presentation signed again by the holder) is refused at issuer_signature', async () => {
    const altered = structuredClone(derived);
    altered.credentialSubject.first_name = 'Eve';
    const result = await verify(await signVp(altered, holder.did, holder.key), expectation(issuer));
    assertRefusedAt(result, 'issuer_signature', /does not verify/);
    assert.equal(result.issuer?.trusted, false);
    assert.equal(result.statusReference, null, "an unsigned status entry is not the issuer's");
  });

  test("an issuer outside the request's trusted issuers is refused at issuer_trusted", async () => {
    const vp = await signVp(derived, holder.did, holder.key);
    const result = await verify(vp, expectation(issuer, { trustedIssuerDids: ['did:key:zUC7other'] }));
    assertRefusedAt(result, 'issuer_trusted', /not one of the request's trusted issuers/);
    assert.deepEqual(result.issuer, { id: issuer.did, trusted: false, certificate: null });
  });

  test('an expired credential is refused at validity, and one not yet valid too', async () => {
    const expired = await issuer.issue(
      personCredential(issuer.did, holder.did, undefined, { validUntil: '2025-01-01T00:00:00Z' }),
    );
    const shown = await deriveWithStock(expired, ['/credentialSubject/id', '/validUntil'], new Uint8Array());
    const vp = await signVp(shown, holder.did, holder.key);
    assertRefusedAt(await verify(vp, expectation(issuer)), 'validity', /expired at 2025-01-01T00:00:00Z/);
    const early = expectation(issuer, { now: new Date('2023-06-01T00:00:00Z') });
    const future = await deriveWithStock(signed, ['/credentialSubject/id', '/validFrom'], new Uint8Array());
    assertRefusedAt(
      await verify(await signVp(future, holder.did, holder.key), early),
      'validity',
      /not valid before/,
    );
  });

  test("a presentation signed by a key other than the holder's is refused at holder_binding", async () => {
    const other = await createStockHolder();
    // Signed by another did:key, which names itself in the proof.
    const byOther = await signVp(derived, holder.did, other.key);
    assertRefusedAt(
      await verify(byOther, expectation(issuer)),
      'holder_binding',
      /not with the key of its holder/,
    );
    // Signed by another key that claims to be the holder's.
    const impostor = await Ed25519Multikey.generate({ controller: holder.did, id: holder.key.id! });
    const forged = await signVp(derived, holder.did, impostor);
    assertRefusedAt(
      await verify(forged, expectation(issuer)),
      'holder_binding',
      /does not verify with the key of its holder/,
    );
  });

  test('a credential whose subject is not the holder is refused at subject_binding', async () => {
    const someoneElse = await createStockHolder();
    const theirs = await issuer.issue(personCredential(issuer.did, someoneElse.did));
    const shown = await deriveWithStock(
      theirs,
      ['/credentialSubject/id', '/credentialSubject/first_name'],
      new Uint8Array(),
    );
    const vp = await signVp(shown, holder.did, holder.key);
    assertRefusedAt(
      await verify(vp, expectation(issuer)),
      'subject_binding',
      /is not the presentation's holder/,
    );
  });

  test('a context Coffer does not have is refused at format, and so is a term no context defines', async () => {
    const extraUrl = 'https://issuer.example/contexts/extra/v1';
    const extra = { '@context': { '@protected': true, nickname: 'https://issuer.example/vocab#nickname' } };
    const stockWithExtra = stockDocumentLoader({ [extraUrl]: extra });
    const other = await createStockIssuer({ [extraUrl]: extra });
    const credential = personCredential(other.did, holder.did, { nickname: 'Ada' });
    credential['@context'].push(extraUrl);
    const theirs = await other.issue(credential);
    const shown = await deriveWithStock(
      theirs,
      ['/credentialSubject/id', '/credentialSubject/nickname'],
      new Uint8Array(),
      stockWithExtra,
    );
    const vp = await vc.signPresentation({
      presentation: {
        '@context': ['https://www.w3.org/ns/credentials/v2'],
        type: ['VerifiablePresentation'],
        holder: holder.did,
        verifiableCredential: [shown],
      },
      suite: new DataIntegrityProof({ signer: holder.key.signer(), cryptosuite: eddsaRdfc2022 }),
      challenge: NONCE,
      domain: CLIENT_ID,
      documentLoader: stockWithExtra,
    });
    const unknown = await verify(vp, expectation(other));
    assertRefusedAt(unknown, 'format', /extra\/v1, which this service does not know/);
    assert.equal(unknown.summary, null);

    const undefinedTerm = {
      ...(await signVp(derived, holder.did, holder.key)),
      comment: 'no context defines this',
    };
    assertRefusedAt(
      await verify(undefinedTerm, expectation(issuer)),
      'format',
      /term "comment" is not defined/,
    );
  });

  test('garbage is refused at format, never thrown', async () => {
    const vp = await signVp(derived, holder.did, holder.key);
    const garbage: unknown[] = [
      undefined,
      null,
      42,
      'eyJhbGciOiJFZERTQSJ9.e30.sig',
      [vp],
      {},
      { type: 'VerifiablePresentation' },
      { ...vp, verifiableCredential: [] },
      { ...vp, verifiableCredential: [derived, derived] },
      { ...vp, verifiableCredential: ['a string'] },
      { ...vp, '@context': 'https://www.w3.org/2018/credentials/v1' },
      { ...vp, '@context': [{ '@version': 2 }] },
      { ...vp, verifiableCredential: [{ ...derived, proof: undefined }] },
      { ...vp, verifiableCredential: [{ ...derived, '@context': 7 }] },
    ];
    for (const value of garbage) {
      const result = await verify(value, expectation(issuer));
      assertRefusedAt(result, 'format');
      assert.deepEqual(
        [result.issuer, result.summary, result.dcqlInput, result.statusReference],
        [null, null, null, null],
      );
    }
  });

  test('later garbage is refused by the check it reaches, never thrown', async () => {
    const vp = await signVp(derived, holder.did, holder.key);
    const cases: Array<[Json, string]> = [
      [
        { ...vp, verifiableCredential: [{ ...derived, proof: { ...derived.proof, proofValue: 'uAAAA' } }] },
        'issuer_signature',
      ],
      [
        { ...vp, verifiableCredential: [{ ...derived, proof: { ...derived.proof, proofValue: 42 } }] },
        'issuer_signature',
      ],
      [
        {
          ...vp,
          verifiableCredential: [
            { ...derived, proof: { ...derived.proof, verificationMethod: 'did:web:x#k' } },
          ],
        },
        'issuer_signature',
      ],
      [{ ...vp, verifiableCredential: [{ ...derived, proof: signed.proof }] }, 'issuer_signature'],
      [{ ...vp, proof: undefined }, 'holder_binding'],
      [{ ...vp, proof: [vp.proof, vp.proof] }, 'holder_binding'],
      [{ ...vp, proof: { ...vp.proof, proofValue: 'z1111' } }, 'holder_binding'],
      [{ ...vp, holder: 'did:key:z6Mk' }, 'holder_binding'],
      [{ ...vp, holder: 'did:example:123' }, 'holder_binding'],
    ];
    for (const [value, name] of cases) assertRefusedAt(await verify(value, expectation(issuer)), name);
  });

  test('without holder binding asked, the bare derived credential is accepted and a presentation fully checked', async () => {
    const bare = await verify(derived, expectation(issuer, { holderBinding: false }));
    assert.equal(bare.ok, true, JSON.stringify(bare.checks));
    assert.deepEqual(names(bare), ['format', 'issuer_signature', 'issuer_trusted', 'validity']);
    assert.deepEqual(bare.summary!.claims['credentialSubject'], { id: holder.did, first_name: 'Ada' });

    const vp = await signVp(derived, holder.did, holder.key, { challenge: 'stale' });
    assertRefusedAt(await verify(vp, expectation(issuer, { holderBinding: false })), 'nonce');

    assertRefusedAt(await verify(derived, expectation(issuer)), 'format', /signed by the holder/);
    const altered = { ...derived, credentialSubject: { ...derived.credentialSubject, first_name: 'Eve' } };
    assertRefusedAt(await verify(altered, expectation(issuer, { holderBinding: false })), 'issuer_signature');
  });

  test('transaction data, which ldp_vc cannot carry, is refused', async () => {
    const vp = await signVp(derived, holder.did, holder.key);
    const result = await verify(vp, expectation(issuer, { transactionData: ['eyJ0eXBlIjoicGF5bWVudCJ9'] }));
    assertRefusedAt(result, 'transaction_data_hashes');
  });
});

describe("the W3C bbs-2023 vectors' derived documents through the ldp_vc verifier", () => {
  const jsonLd = vectorJsonLd();
  const vectorVerify = createLdpPresentationVerifier({
    operations: inProcessOperations({ bbs: fastBbs, jsonLd }),
    jsonLd,
  });
  for (const example of ['', 'prc/']) {
    test(`${example ? 'enhanced (prc)' : 'baseline (windsurf)'}: the derived proof verifies, but its key is not its issuer's`, async () => {
      const derived = readVector(`${example}derivedRevealDocument.json`);
      const issuer = typeof derived.issuer === 'string' ? derived.issuer : derived.issuer.id;
      const expected: PresentationExpectation = {
        audience: {
          clientId: CLIENT_ID,
          nonce: NONCE,
          responseUri: 'https://verifier.example/r',
          encryptionJwkThumbprint: null,
        },
        now: new Date('2025-01-01T00:00:00Z'),
        issuerTrustAnchors: [],
        trustedIssuerDids: [issuer],
        holderBinding: false,
        transactionData: [],
        maxAgeSeconds: 300,
      };
      // The vectors' issuers (a URL, a P-256 did:key) do not control the BLS12-381 key that
      // signed them, so the check ends there; that sentence is only reached after the BBS proof held.
      const result = await vectorVerify(derived, expected);
      assertRefusedAt(
        result,
        'issuer_signature',
        /verifies with a key of did:key:zUC7DerdEmfZ8f4pF.*which is not its issuer/,
      );
      assert.equal(result.summary!.issuer, issuer);

      const altered = structuredClone(derived);
      altered.credentialSubject[example ? 'birthCountry' : 'sailNumber'] = 'Mars';
      assertRefusedAt(await vectorVerify(altered, expected), 'issuer_signature', /derived proof was refused/);
    });
  }
});
