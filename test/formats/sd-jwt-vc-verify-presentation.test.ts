import assert from 'node:assert/strict';
import {
  createHash,
  generateKeyPairSync,
  type JsonWebKey,
  randomBytes,
  sign,
  X509Certificate,
} from 'node:crypto';
import { before, describe, test } from 'node:test';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import type { CheckName, PresentationExpectation } from '../../src/formats/presentation-verification.ts';
import { verifySdJwtPresentation } from '../../src/formats/sd-jwt-vc/verify-presentation.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_VCT, sha256 } from '../helpers/issuers/sd-jwt-issuer.ts';
import { keyIdentifierOf } from '../oid4vp/certificates.ts';

/**
 * The dc+sd-jwt verifier on its own: credentials issued with @sd-jwt/sd-jwt-vc over a
 * certificate made with @peculiar/x509, presented with @sd-jwt's present and key binding JWTs
 * signed with jose (or @sd-jwt's kbSigner); never with Coffer's wallet code.
 */

const CLIENT_ID = 'x509_san_dns:verifier.example';
const NONCE = 'n-0S6_WzA2Mj';
const KEY_BINDING: CheckName[] = ['holder_binding', 'audience', 'nonce', 'freshness', 'sd_hash'];
const ALL: CheckName[] = [
  'format',
  'issuer_signature',
  'issuer_named',
  'issuer_trusted',
  'digests',
  'validity',
  ...KEY_BINDING,
];

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

const holderInstance = new SDJwtVcInstance({ hasher: async (data) => sha256(data), hashAlg: 'sha-256' });
/** The issued SD-JWT with only the framed disclosures, ending in `~` (no key binding JWT). */
const disclose = (credential: string, frame: Record<string, unknown>) =>
  holderInstance.present(credential, frame as never);
const sdHashOf = (sdJwt: string) => createHash('sha256').update(sdJwt).digest('base64url');

/** A key binding JWT over `sdJwt` signed with jose; `claims` replace or add to the usual ones. */
function keyBinding(sdJwt: string, key: KeyPair['privateKey'], claims: JWTPayload = {}, typ = 'kb+jwt') {
  return new SignJWT({
    iat: Math.floor(Date.now() / 1000),
    aud: CLIENT_ID,
    nonce: NONCE,
    sd_hash: sdHashOf(sdJwt),
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', typ })
    .sign(key);
}

function expectation(
  identity: IssuerIdentity,
  more: Partial<PresentationExpectation> = {},
): PresentationExpectation {
  return {
    audience: {
      clientId: CLIENT_ID,
      nonce: NONCE,
      responseUri: 'https://verifier.example/response',
      encryptionJwkThumbprint: null,
    },
    now: new Date(),
    issuerTrustAnchors: [new X509Certificate(identity.ca.pem)],
    trustedIssuerDids: [],
    holderBinding: true,
    transactionData: [],
    maxAgeSeconds: 300,
    ...more,
  };
}

/** The result passed every check up to `name`, which failed, and nothing ran after it. */
function failedAt(result: Awaited<ReturnType<typeof verifySdJwtPresentation>>, name: CheckName) {
  assert.equal(result.ok, false);
  const last = result.checks.at(-1)!;
  assert.deepEqual({ name: last.name, ok: last.ok }, { name, ok: false }, JSON.stringify(result.checks));
  assert.ok(result.checks.slice(0, -1).every((check) => check.ok));
  assert.equal(typeof last.detail, 'string');
}

describe('dc+sd-jwt: verifying a presentation', () => {
  let identity: IssuerIdentity;
  let holder: KeyPair;
  let holderJwk: JsonWebKey;
  let credential: string;
  let presented: string;

  before(async () => {
    identity = await makeIssuerIdentity();
    holder = await generateKeyPair('ES256', { extractable: true });
    holderJwk = (await exportJWK(holder.publicKey)) as JsonWebKey;
    credential = await issueSdJwtVc(identity, { holderJwk });
    presented = await disclose(credential, { given_name: true, address: { locality: true } });
  });

  test('a presentation made by @sd-jwt and jose passes every check and shows only what was disclosed', async () => {
    const result = await verifySdJwtPresentation(
      presented + (await keyBinding(presented, holder.privateKey)),
      expectation(identity),
    );
    assert.deepEqual(
      result.checks,
      ALL.map((name) => ({ name, ok: true })),
    );
    assert.equal(result.ok, true);
    assert.equal(result.issuer?.id, 'https://issuer.example.com');
    assert.equal(result.issuer?.trusted, true);
    assert.equal(
      result.issuer?.certificate?.subject,
      'CN=Example Issuer Document Signer, O=Example Issuer, C=GB',
    );
    const claims = result.summary!.claims;
    assert.equal(claims['given_name'], 'Ada');
    assert.deepEqual(claims['address'], { locality: 'London' });
    for (const hidden of ['family_name', 'birthdate', 'email', 'nationalities', 'is_over_18']) {
      assert.equal(claims[hidden], undefined, hidden);
    }
    assert.equal(result.summary!.type, PID_VCT);
    // The chain's authority key identifiers come along, for a query's trusted_authorities.
    assert.deepEqual(result.dcqlInput, {
      credential_format: 'dc+sd-jwt',
      vct: PID_VCT,
      claims,
      authority: { type: 'aki', values: [await keyIdentifierOf(identity.ca)] },
    });
    assert.equal(result.statusReference, null);
  });

  test("@sd-jwt's own key binding (kbSigner, its sd_hash) is accepted too", async () => {
    const instance = new SDJwtVcInstance({
      hasher: async (data) => sha256(data),
      hashAlg: 'sha-256',
      kbSignAlg: 'ES256',
      kbSigner: async (data) =>
        Buffer.from(
          await crypto.subtle.sign(
            { name: 'ECDSA', hash: 'SHA-256' },
            holder.privateKey as Parameters<typeof crypto.subtle.sign>[1],
            Buffer.from(data),
          ),
        ).toString('base64url'),
    });
    const withKb = await instance.present(credential, { email: true } as never, {
      kb: { payload: { aud: CLIENT_ID, nonce: NONCE, iat: Math.floor(Date.now() / 1000) } },
    });
    const result = await verifySdJwtPresentation(withKb, expectation(identity));
    assert.equal(result.ok, true, JSON.stringify(result.checks));
    assert.equal(result.summary!.claims['email'], 'ada@example.com');
    assert.equal(result.summary!.claims['given_name'], undefined);
  });

  test('the key binding JWT bound to another request: wrong nonce, wrong aud', async () => {
    const expected = expectation(identity);
    failedAt(
      await verifySdJwtPresentation(
        presented + (await keyBinding(presented, holder.privateKey, { nonce: 'other' })),
        expected,
      ),
      'nonce',
    );
    failedAt(
      await verifySdJwtPresentation(
        presented + (await keyBinding(presented, holder.privateKey, { aud: 'x509_san_dns:other.example' })),
        expected,
      ),
      'audience',
    );
  });

  test('a key binding JWT taken from another presentation fails sd_hash', async () => {
    const other = await disclose(credential, { family_name: true });
    const result = await verifySdJwtPresentation(
      presented + (await keyBinding(other, holder.privateKey)),
      expectation(identity),
    );
    failedAt(result, 'sd_hash');
  });

  test('a disclosure the issuer never signed, appended, fails digests', async () => {
    const smuggled = Buffer.from(
      JSON.stringify([randomBytes(16).toString('base64url'), 'is_admin', true]),
    ).toString('base64url');
    const tampered = `${presented}${smuggled}~`;
    const result = await verifySdJwtPresentation(
      tampered + (await keyBinding(tampered, holder.privateKey)),
      expectation(identity),
    );
    failedAt(result, 'digests');
    assert.match(result.checks.at(-1)!.detail!, /is_admin/);
    assert.equal(result.summary!.claims['is_admin'], undefined);
  });

  test('an issuer that chains to none of the anchors fails issuer_trusted and is reported untrusted', async () => {
    const stranger = await makeIssuerIdentity('Stranger');
    const foreign = await disclose(await issueSdJwtVc(stranger, { holderJwk }), { given_name: true });
    const result = await verifySdJwtPresentation(
      foreign + (await keyBinding(foreign, holder.privateKey)),
      expectation(identity),
    );
    failedAt(result, 'issuer_trusted');
    assert.equal(result.issuer?.trusted, false);
    assert.equal(result.issuer?.certificate?.trusted, false);
  });

  test('an expired credential fails validity', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    const expired = await disclose(await issueSdJwtVc(identity, { holderJwk, exp: past }), {
      given_name: true,
    });
    failedAt(
      await verifySdJwtPresentation(
        expired + (await keyBinding(expired, holder.privateKey)),
        expectation(identity),
      ),
      'validity',
    );
  });

  test('a stale or future key binding JWT fails freshness', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const iat of [now - 301, now + 120]) {
      failedAt(
        await verifySdJwtPresentation(
          presented + (await keyBinding(presented, holder.privateKey, { iat })),
          expectation(identity),
        ),
        'freshness',
      );
    }
  });

  test('a key binding JWT signed by another key, or of another typ, fails holder_binding', async () => {
    const stranger = await generateKeyPair('ES256');
    failedAt(
      await verifySdJwtPresentation(
        presented + (await keyBinding(presented, stranger.privateKey)),
        expectation(identity),
      ),
      'holder_binding',
    );
    failedAt(
      await verifySdJwtPresentation(
        presented + (await keyBinding(presented, holder.privateKey, {}, 'JWT')),
        expectation(identity),
      ),
      'holder_binding',
    );
  });

  test('without a key binding JWT: holder_binding fails when asked for, the binding checks are skipped when not', async () => {
    failedAt(await verifySdJwtPresentation(presented, expectation(identity)), 'holder_binding');
    const bearer = await verifySdJwtPresentation(presented, expectation(identity, { holderBinding: false }));
    assert.deepEqual(
      bearer.checks.map((check) => check.name),
      ['format', 'issuer_signature', 'issuer_named', 'issuer_trusted', 'digests', 'validity'],
    );
    assert.equal(bearer.ok, true);
    // One given although not asked for is still checked.
    const given = presented + (await keyBinding(presented, holder.privateKey, { nonce: 'other' }));
    failedAt(await verifySdJwtPresentation(given, expectation(identity, { holderBinding: false })), 'nonce');
  });

  test('transaction data: the hashes of the strings as received, in order, with an allowed algorithm', async () => {
    const items = ['eyJ0eXBlIjoicGF5bWVudCJ9', 'eyJ0eXBlIjoic2lnbiJ9'];
    const hashOf = (alg: string, item: string) => createHash(alg).update(item).digest('base64url');
    const presentWith = async (claims: JWTPayload) =>
      presented + (await keyBinding(presented, holder.privateKey, claims));
    const expected = expectation(identity, { transactionData: items });

    const good = await verifySdJwtPresentation(
      await presentWith({ transaction_data_hashes: items.map((item) => hashOf('sha256', item)) }),
      expected,
    );
    assert.equal(good.ok, true, JSON.stringify(good.checks));
    assert.deepEqual(good.checks.at(-1), { name: 'transaction_data_hashes', ok: true });

    failedAt(await verifySdJwtPresentation(await presentWith({}), expected), 'transaction_data_hashes');
    failedAt(
      await verifySdJwtPresentation(
        await presentWith({ transaction_data_hashes: items.map((item) => hashOf('sha256', item)).reverse() }),
        expected,
      ),
      'transaction_data_hashes',
    );

    const sha384 = { transaction_data_hashes: items.map((item) => hashOf('sha384', item)) };
    const allowing = expectation(identity, {
      transactionData: items,
      transactionDataHashAlgorithms: ['sha-384'],
    });
    assert.equal(
      (
        await verifySdJwtPresentation(
          await presentWith({ ...sha384, transaction_data_hashes_alg: 'sha-384' }),
          allowing,
        )
      ).ok,
      true,
    );
    // The request named its algorithms, so the key binding JWT must say which it used.
    failedAt(await verifySdJwtPresentation(await presentWith(sha384), allowing), 'transaction_data_hashes');
    failedAt(
      await verifySdJwtPresentation(
        await presentWith({ ...sha384, transaction_data_hashes_alg: 'sha-384' }),
        expected,
      ),
      'transaction_data_hashes',
    );
  });

  test('an issuer named by did:jwk is trusted only when the request lists its DID', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const did = `did:jwk:${Buffer.from(JSON.stringify(publicKey.export({ format: 'jwk' }))).toString('base64url')}`;
    const issuer = new SDJwtVcInstance({
      hasher: async (data) => sha256(data),
      hashAlg: 'sha-256',
      saltGenerator: async () => randomBytes(16).toString('base64url'),
      signer: async (data) => sign(null, Buffer.from(data), privateKey).toString('base64url'),
      signAlg: 'EdDSA',
    });
    const payload = {
      iss: did,
      vct: PID_VCT,
      iat: Math.floor(Date.now() / 1000),
      cnf: { jwk: holderJwk },
      given_name: 'Ada',
      status: { status_list: { idx: 7, uri: 'https://issuer.example.com/status/1' } },
    };
    const issued = await issuer.issue(payload, { _sd: ['given_name'] } as never, {
      header: { typ: 'dc+sd-jwt', kid: `${did}#0` },
    });
    const shown = await disclose(issued, { given_name: true });
    const value = shown + (await keyBinding(shown, holder.privateKey));

    const trusted = await verifySdJwtPresentation(value, expectation(identity, { trustedIssuerDids: [did] }));
    assert.equal(trusted.ok, true, JSON.stringify(trusted.checks));
    assert.deepEqual(trusted.issuer, { id: did, trusted: true, certificate: null, trustedBy: 'did' });
    assert.deepEqual(
      { ...trusted.statusReference, issuerKey: undefined },
      { list: 'token', uri: 'https://issuer.example.com/status/1', index: 7, issuerKey: undefined },
    );

    const untrusted = await verifySdJwtPresentation(value, expectation(identity));
    failedAt(untrusted, 'issuer_trusted');
    assert.match(untrusted.checks.at(-1)!.detail!, /not one of the trusted issuers/);
  });

  test('a tampered issuer signature fails issuer_signature and the issuer is not trusted', async () => {
    const [jwt, ...rest] = presented.split('~');
    const [header, body, signature] = jwt!.split('.');
    const flipped = `${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BA' : 'AA'}`;
    const tampered = [`${header}.${body}.${flipped}`, ...rest].join('~');
    const result = await verifySdJwtPresentation(
      tampered + (await keyBinding(tampered, holder.privateKey)),
      expectation(identity),
    );
    failedAt(result, 'issuer_signature');
    assert.equal(result.issuer?.trusted, false);
  });

  test('garbage is a failed format check, never a throw', async () => {
    const typJwt = credential.replace(
      /^[^.]+/,
      Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT' })).toString('base64url'),
    );
    const unsigned = `${Buffer.from('{"alg":"none","typ":"dc+sd-jwt"}').toString('base64url')}.e30.AA~`;
    for (const value of [
      undefined,
      null,
      42,
      {},
      [presented],
      '',
      '~',
      'not an sd-jwt',
      presented.split('~')[0],
      `${presented}not-a-jwt`,
      `${presented}a.b.c`,
      `${presented.split('~')[0]}~bm90IGpzb24~`,
      typJwt,
      unsigned,
    ]) {
      const result = await verifySdJwtPresentation(value, expectation(identity));
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
