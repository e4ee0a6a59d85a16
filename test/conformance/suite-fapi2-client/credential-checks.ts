import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { decodeSdJwt, getClaims } from '@sd-jwt/decode';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { calculateJwkThumbprint, compactVerify, type JWK } from 'jose';
import type { Conditions } from '../harness.ts';
import { exchange, mediaTypeOf } from './http.ts';
import { bareJwk, decodeJwt } from './keys.ts';

/**
 * The suite's verification of an issued SD-JWT VC (VCIProfileBehavior.verifySdJwtCredential with
 * the HAIP branches, sequence ValidateSdJwtVcCredentialClaims): parsed with @sd-jwt/decode,
 * certificates read with node:crypto, signatures checked with jose, the status list read with
 * @sd-jwt/jwt-status-list. The FAPI modules register no trust anchors, so the x5c chains are
 * walked without anchoring, as the suite does there.
 */

const hasher = async (data: string | ArrayBuffer, alg: string) => {
  assert.equal(alg.toLowerCase(), 'sha-256');
  return new Uint8Array(
    createHash('sha256')
      .update(typeof data === 'string' ? data : Buffer.from(data))
      .digest(),
  );
};

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const JWK_MEMBERS = [
  ...['kty', 'use', 'key_ops', 'alg', 'kid', 'x5u', 'x5c', 'x5t', 'x5t#S256'],
  ...['crv', 'x', 'y', 'n', 'e'],
];

/** AbstractValidateX5cCertificateChain without a configured anchor: the walk, dates, the leaf's signature. */
async function validateX5cChain(jws: string, now: Date) {
  const { header } = decodeJwt(jws);
  const x5c = header['x5c'];
  assert.ok(Array.isArray(x5c) && x5c.length > 0, 'no x5c');
  const chain = (x5c as string[]).map((der) => new X509Certificate(Buffer.from(der, 'base64')));
  const leaf = chain[0]!;
  assert.ok(!leaf.checkIssued(leaf), 'the leaf is self-signed');
  const last = chain.at(-1)!;
  assert.ok(chain.length === 1 || !last.checkIssued(last), 'the trust anchor is included in x5c');
  for (const [i, cert] of chain.entries()) {
    assert.ok(
      new Date(cert.validFrom) <= now && now <= new Date(cert.validTo),
      `certificate ${i} is not valid now`,
    );
    const next = chain[i + 1];
    if (next)
      assert.ok(
        cert.checkIssued(next) && cert.verify(next.publicKey),
        `certificate ${i} is not issued by ${i + 1}`,
      );
  }
  await compactVerify(jws, leaf.publicKey);
}

export interface CredentialExpectations {
  vct: string;
  /** The keys the proofs named (VCIEnsureSdJwtCnfMatchesProofKey). */
  proofKeys: JWK[];
  fetch: typeof fetch;
}

export async function verifySdJwtCredential(
  c: Conditions,
  credential: string,
  expected: CredentialExpectations,
) {
  let decoded: Awaited<ReturnType<typeof decodeSdJwt>>;
  let claims: Record<string, unknown> = {};
  await c.check('ParseCredentialAsSdJwt', async () => {
    assert.ok(credential.endsWith('~'), 'an issued SD-JWT carries no key binding JWT');
    decoded = await decodeSdJwt(credential, hasher);
    claims = await getClaims(decoded.jwt.payload, decoded.disclosures, hasher);
  });
  const header = decoded!.jwt.header as Record<string, unknown>;
  const payload = decoded!.jwt.payload as Record<string, unknown>;
  const now = Date.now() / 1000;
  await c.check('VCICaptureCredentialForLinkability', () => assert.ok(credential.length > 0));
  await c.check('ValidateCredentialJWTIat', () => {
    const iat = payload['iat'];
    if (iat === undefined) return;
    assert.equal(typeof iat, 'number');
    assert.ok((iat as number) <= now + 5 && (iat as number) >= Date.UTC(2019, 0, 1) / 1000);
  });
  await c.check('ValidateCredentialJWTNbf', () => {
    const nbf = payload['nbf'];
    if (nbf === undefined) return;
    assert.ok((nbf as number) <= now + 5 && (nbf as number) >= Date.UTC(2019, 0, 1) / 1000);
  });
  await c.check('ValidateCredentialJWTExp', () => {
    const exp = payload['exp'];
    if (exp === undefined) return;
    assert.ok((exp as number) > now && (exp as number) < now + 50 * 365 * 86400);
  });
  await c.check('ValidateCredentialJWTHeaderTyp', () => assert.equal(header['typ'], 'dc+sd-jwt'));
  await c.check('ValidateCredentialJWTVct', () =>
    assert.ok(typeof payload['vct'] === 'string' && payload['vct']),
  );
  const cnf = payload['cnf'] as { jwk?: Record<string, unknown> } | undefined;
  await c.check('ValidateCredentialCnfJwkIsPublicKey', () => {
    assert.ok(cnf?.jwk, 'no cnf.jwk');
    assert.deepEqual(
      PRIVATE_MEMBERS.filter((m) => m in cnf.jwk!),
      [],
    );
  });
  await c.check('WarnIfUnexpectedFieldsInCredentialCnf', () => assert.deepEqual(Object.keys(cnf!), ['jwk']));
  await c.check('WarnIfUnknownFieldsInCredentialCnfJwk', () =>
    assert.deepEqual(
      Object.keys(cnf!.jwk!).filter((m) => !JWK_MEMBERS.includes(m)),
      [],
    ),
  );
  await c.check('ValidateSdJwtDisclosureSaltsAreUnique', () => {
    const salts = decoded!.disclosures.map((d) => d.salt);
    assert.equal(new Set(salts).size, salts.length);
  });
  const status = (payload['status'] as { status_list?: { idx?: unknown; uri?: unknown } } | undefined)
    ?.status_list;
  let statusResponse: Awaited<ReturnType<typeof exchange>> | undefined;
  await c.check('ClearStatusListTokenEndpointResponse', () => {
    statusResponse = undefined;
  });
  await c.check('FetchStatusListToken', async () => {
    if (payload['status'] === undefined) return;
    assert.equal(typeof status?.idx, 'number');
    assert.equal(typeof status?.uri, 'string');
    statusResponse = await exchange(expected.fetch, status!.uri as string, {
      headers: { accept: 'application/statuslist+jwt' },
    });
    assert.ok(statusResponse.status >= 200 && statusResponse.status < 300, `HTTP ${statusResponse.status}`);
  });
  await c.check('ExtractStatusListTokenFromStatusListTokenEndpointResponse', () => {
    if (!statusResponse) return;
    assert.equal(statusResponse.text.split('.').length, 3);
    decodeJwt(statusResponse.text);
  });
  await c.check('ValidateSdJwtCredentialX5cCertificateChain', () =>
    validateX5cChain(credential.split('~')[0]!, new Date()),
  );
  await c.check('ValidateStatusListTokenX5cCertificateChain', async () => {
    if (statusResponse) await validateX5cChain(statusResponse.text, new Date());
  });
  await c.check('ValidateCredentialValidityInfoIsPresent', () =>
    assert.ok(payload['exp'] !== undefined || payload['status'] !== undefined, 'neither exp nor status'),
  );
  await c.check('CheckCredentialStatus', () => {
    if (!statusResponse) return;
    const list = getListFromStatusListJWT(statusResponse.text);
    assert.equal(list.getStatus(status!.idx as number), 0, 'the credential is not valid in its status list');
  });
  await c.check('EnsureContentTypeStatusListJwt', () => {
    if (statusResponse) assert.equal(mediaTypeOf(statusResponse.headers), 'application/statuslist+jwt');
  });
  await c.check('EnsureSdJwtVcVctMatchesCredentialConfiguration', () =>
    assert.equal(claims['vct'], expected.vct),
  );
  await c.check('VCIEnsureSdJwtCnfMatchesProofKey', async () => {
    const issued = await calculateJwkThumbprint(bareJwk(cnf!.jwk as JWK));
    const proved = await Promise.all(expected.proofKeys.map((k) => calculateJwkThumbprint(bareJwk(k))));
    assert.ok(proved.includes(issued), 'cnf.jwk is none of the proof keys');
  });
  await c.check('VCIExtractSdJwtVcTypeMetadataUrl', () => {
    // Only an https vct names Type Metadata to fetch (and check); the configuration's vct is a URN.
    assert.equal(typeof payload['vct'], 'string');
    assert.ok(
      !String(payload['vct']).startsWith('https://'),
      'Type Metadata is not fetched by this suite client',
    );
  });
}
