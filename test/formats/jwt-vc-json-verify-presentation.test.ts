import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { JWTPayload } from 'jose';
import { verifyJwtVcPresentation } from '../../src/formats/jwt-vc-json/verify-presentation.ts';
import { createDocumentLoader } from '../../src/formats/ldp-vc/contexts/document-loader.ts';
import type {
  CheckName,
  PresentationExpectation,
  VerifiedPresentation,
} from '../../src/formats/presentation-verification.ts';
import { createDidHolder, type DidHolder as Holder, signVpJwt } from '../helpers/issuers/holder.ts';
import { createJwtVcIssuer, type JwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';

/**
 * The jwt_vc_json verifier on its own: VC-JWTs issued with jose by a did:jwk issuer, VP JWTs
 * signed with jose by an Ed25519 did:key holder; never with Coffer's wallet code.
 */

const CLIENT_ID = 'x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk';
const NONCE = 'vp-nonce-4f0c2a';
const ALL: CheckName[] = [
  'format',
  'issuer_signature',
  'issuer_trusted',
  'validity',
  'holder_binding',
  'audience',
  'nonce',
  'freshness',
  'subject_binding',
];
/** The bundled contexts only: the VC 1.1 context is among them. */
const jsonLd = { documentLoader: createDocumentLoader(async () => undefined) };

/** A VP JWT bound to this file's verifier unless `claims` say otherwise. */
const vpJwt = (
  holder: Holder,
  credentials: string[],
  claims: JWTPayload = {},
  signer?: Holder['keys']['privateKey'],
) => signVpJwt(holder, credentials, { aud: CLIENT_ID, nonce: NONCE, ...claims }, signer);

function failedAt(result: VerifiedPresentation, name: CheckName) {
  assert.equal(result.ok, false);
  const last = result.checks.at(-1)!;
  assert.deepEqual({ name: last.name, ok: last.ok }, { name, ok: false }, JSON.stringify(result.checks));
  assert.ok(result.checks.slice(0, -1).every((check) => check.ok));
  assert.equal(typeof last.detail, 'string');
}

describe('jwt_vc_json: verifying a presentation', () => {
  let issuer: JwtVcIssuer;
  let holder: Holder;
  let credential: string;
  const expectation = (more: Partial<PresentationExpectation> = {}): PresentationExpectation => ({
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
    ...more,
  });
  const verify = (presented: unknown, more?: Partial<PresentationExpectation>) =>
    verifyJwtVcPresentation(presented, expectation(more), jsonLd);

  before(async () => {
    issuer = await createJwtVcIssuer();
    holder = await createDidHolder();
    credential = await issuer.issue({ subject: holder.did });
  });

  test('a VP JWT made with jose passes every check; the VC is shown whole, its types expanded', async () => {
    const result = await verify(await vpJwt(holder, [credential]));
    assert.deepEqual(
      result.checks,
      ALL.map((name) => ({ name, ok: true })),
    );
    assert.equal(result.ok, true);
    assert.deepEqual(result.issuer, { id: issuer.did, trusted: true, certificate: null, trustedBy: 'did' });
    const vc = result.summary!.claims as { credentialSubject: Record<string, unknown> };
    assert.equal(vc.credentialSubject['given_name'], 'Ada');
    assert.deepEqual(result.summary!.type, ['VerifiableCredential', 'UniversityDegreeCredential']);
    assert.deepEqual(result.dcqlInput, {
      credential_format: 'jwt_vc_json',
      type: ['https://www.w3.org/2018/credentials#VerifiableCredential', 'UniversityDegreeCredential'],
      claims: result.summary!.claims,
    });
  });

  test("the credential's Bitstring status entry is where the verifier looks for its status", async () => {
    const withStatus = await issuer.issue({
      subject: holder.did,
      credentialStatus: {
        type: 'BitstringStatusListEntry',
        statusPurpose: 'revocation',
        statusListIndex: '94567',
        statusListCredential: 'https://issuer.example.com/status/3',
      },
    });
    const { statusReference } = await verify(await vpJwt(holder, [withStatus]));
    assert.deepEqual(
      { ...statusReference, issuerKey: undefined },
      {
        list: 'bitstring',
        uri: 'https://issuer.example.com/status/3',
        index: 94567,
        purpose: 'revocation',
        issuerKey: undefined,
      },
    );
  });

  test('a VP JWT bound to another request: wrong aud, wrong nonce', async () => {
    failedAt(
      await verify(await vpJwt(holder, [credential], { aud: 'x509_san_dns:other.example' })),
      'audience',
    );
    failedAt(await verify(await vpJwt(holder, [credential], { nonce: 'another' })), 'nonce');
  });

  test('a stale or future VP JWT fails freshness', async () => {
    const now = Math.floor(Date.now() / 1000);
    failedAt(await verify(await vpJwt(holder, [credential], { iat: now - 301 })), 'freshness');
    failedAt(await verify(await vpJwt(holder, [credential], { iat: now + 120 })), 'freshness');
    failedAt(await verify(await vpJwt(holder, [credential], { exp: now - 120 })), 'freshness');
  });

  test('a VP JWT signed by a key that is not its iss fails holder_binding', async () => {
    const stranger = await createDidHolder();
    failedAt(await verify(await vpJwt(holder, [credential], {}, stranger.keys.privateKey)), 'holder_binding');
  });

  test("a credential whose subject is not the VP's signer fails subject_binding", async () => {
    const someoneElse = await createDidHolder();
    const theirs = await issuer.issue({ subject: someoneElse.did });
    const result = await verify(await vpJwt(holder, [theirs]));
    failedAt(result, 'subject_binding');
    assert.match(result.checks.at(-1)!.detail!, new RegExp(someoneElse.did));
  });

  test('an issuer the request does not trust fails issuer_trusted and is reported untrusted', async () => {
    const result = await verify(await vpJwt(holder, [credential]), { trustedIssuerDids: [] });
    failedAt(result, 'issuer_trusted');
    assert.deepEqual(result.issuer, { id: issuer.did, trusted: false, certificate: null });
  });

  test('an expired credential fails validity', async () => {
    const expired = await issuer.issue({ subject: holder.did, exp: Math.floor(Date.now() / 1000) - 3600 });
    failedAt(await verify(await vpJwt(holder, [expired])), 'validity');
  });

  test("a credential signed by someone else in the issuer's name fails issuer_signature", async () => {
    const forger = await createJwtVcIssuer();
    const forged = await forger.issue({ subject: holder.did });
    const [, body, signature] = forged.split('.');
    const [header] = credential.split('.');
    const claimed = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const rebodied = Buffer.from(JSON.stringify({ ...claimed, iss: issuer.did })).toString('base64url');
    const result = await verify(await vpJwt(holder, [`${header}.${rebodied}.${signature}`]));
    failedAt(result, 'issuer_signature');
    assert.equal(result.issuer?.trusted, false);
  });

  test('a bare VC-JWT: accepted without holder binding checks when not asked for, refused when asked for', async () => {
    const bearer = await verify(credential, { holderBinding: false });
    assert.equal(bearer.ok, true);
    assert.deepEqual(
      bearer.checks.map((check) => check.name),
      ['format', 'issuer_signature', 'issuer_trusted', 'validity'],
    );
    failedAt(await verify(credential), 'holder_binding');
    // A VP given although not asked for is still checked.
    failedAt(
      await verify(await vpJwt(holder, [credential], { nonce: 'x' }), { holderBinding: false }),
      'nonce',
    );
  });

  test('a VP of no credential or of two, and garbage, are a failed format check, never a throw', async () => {
    const second = await issuer.issue({ subject: holder.did });
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"vp":{}}').toString('base64url')}.AA`;
    for (const value of [
      await vpJwt(holder, []),
      await vpJwt(holder, [credential, second]),
      await vpJwt(holder, ['not-a-jwt']),
      await vpJwt(holder, [{ vc: {} } as never]),
      await vpJwt(holder, [credential], { vp: 'flat' }),
      undefined,
      null,
      7,
      {},
      [credential],
      '',
      'a.b.c',
      `${credential}~`,
      unsigned,
    ]) {
      const result = await verify(value);
      assert.deepEqual(
        result.checks.map((check) => [check.name, check.ok]),
        [['format', false]],
        String(value),
      );
      assert.deepEqual(
        { ...result, checks: [] },
        { ok: false, checks: [], issuer: null, summary: null, dcqlInput: null, statusReference: null },
      );
    }
  });
});
