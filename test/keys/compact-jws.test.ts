import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import { CompactSign, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import {
  decodeCompactJws,
  type JwsAlgorithm,
  JwsError,
  publicKeyFromJwk,
  signCompactJwsES256,
  verifyJwsSignature,
} from '../../src/keys/compact-jws.ts';

const ALGORITHMS: JwsAlgorithm[] = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256'];
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWS made by jose, the library every other JOSE check in Coffer uses. */
async function joseSigned(
  alg: JwsAlgorithm,
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
) {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jws = await new CompactSign(Buffer.from(JSON.stringify(payload)))
    .setProtectedHeader({ alg, ...header })
    .sign(pair.privateKey);
  return { jws, jwk: await exportJWK(pair.publicKey) };
}

const rejects = (fn: () => unknown, code: string) =>
  assert.throws(fn, (error: unknown) => error instanceof JwsError && error.code === code);

describe('compact JWS with node:crypto', () => {
  for (const alg of ALGORITHMS) {
    test(`a ${alg} JWS made by jose verifies, and a changed payload or signature does not`, async () => {
      const { jws, jwk } = await joseSigned(alg, { htm: 'GET', n: 1 }, { typ: 'dpop+jwt' });
      const key = publicKeyFromJwk(jwk);
      const decoded = decodeCompactJws(jws);
      assert.deepEqual(decoded.payload, { htm: 'GET', n: 1 });
      assert.equal(decoded.header['typ'], 'dpop+jwt');
      verifyJwsSignature(decoded, alg, key);

      const [h, , s] = jws.split('.');
      rejects(
        () => verifyJwsSignature(decodeCompactJws(`${h}.${encode({ htm: 'POST', n: 1 })}.${s}`), alg, key),
        'signature',
      );
      const flipped = Buffer.from(s!, 'base64url');
      flipped[flipped.length - 1]! ^= 1;
      rejects(
        () =>
          verifyJwsSignature(
            decodeCompactJws(`${jws.split('.').slice(0, 2).join('.')}.${flipped.toString('base64url')}`),
            alg,
            key,
          ),
        'signature',
      );
    });
  }

  test('signatures of every size round trip between here and jose (R or S with leading zeros, high bits)', async () => {
    // About one signature in 128 has an R or S starting with a zero byte, half with a high bit:
    // hundreds of them cover the DER conversions' short and padded integers.
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const joseKey = await importJWK(publicKey.export({ format: 'jwk' }) as never, 'ES256');
    for (let i = 0; i < 600; i++) {
      const token = signCompactJwsES256({ kid: 'k' }, { i }, privateKey);
      assert.equal(Buffer.from(token.split('.')[2]!, 'base64url').length, 64);
      await jwtVerify(token, joseKey, { algorithms: ['ES256'] });
    }
    for (const alg of ['ES256', 'ES384', 'ES512'] as const) {
      const pair = await generateKeyPair(alg, { extractable: true });
      const key = publicKeyFromJwk(await exportJWK(pair.publicKey));
      for (let i = 0; i < 200; i++) {
        const jws = await new CompactSign(Buffer.from(`{"i":${i}}`))
          .setProtectedHeader({ alg })
          .sign(pair.privateKey);
        verifyJwsSignature(decodeCompactJws(jws), alg, key);
      }
    }
  });

  test('a key that does not fit the algorithm is refused, whatever the signature', async () => {
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const input = `${encode({ alg: 'ES384' })}.${encode({ a: 1 })}`;
    const signature = sign('sha256', Buffer.from(input), { key: p256.privateKey, dsaEncoding: 'ieee-p1363' });
    const decoded = decodeCompactJws(`${input}.${signature.toString('base64url')}`);
    rejects(() => verifyJwsSignature(decoded, 'ES384', p256.publicKey), 'key');
    rejects(() => verifyJwsSignature(decoded, 'EdDSA', p256.publicKey), 'key');
    rejects(() => verifyJwsSignature(decoded, 'PS256', p256.publicKey), 'key');
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
    rejects(() => verifyJwsSignature(decoded, 'PS256', rsa1024.publicKey), 'key');
    // The same signature with the curve it was made on: right key, wrong length for ES384.
    verifyJwsSignature(decoded, 'ES256', p256.publicKey);
  });

  test('an ECDSA signature in DER or of the wrong length is refused', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const input = `${encode({ alg: 'ES256' })}.${encode({ a: 1 })}`;
    const der = sign('sha256', Buffer.from(input), privateKey);
    rejects(
      () => verifyJwsSignature(decodeCompactJws(`${input}.${der.toString('base64url')}`), 'ES256', publicKey),
      'signature',
    );
  });

  test('malformed input, critical extensions and unencoded payloads are refused before any key is used', () => {
    for (const token of [
      '',
      'a.b',
      'a.b.c.d',
      `${encode({ alg: 'ES256' })}.${encode({})}.`,
      `${encode({ alg: 'ES256' })}.${encode([1])}.AA`,
      `${encode(null)}.${encode({})}.AA`,
      `${encode({ alg: 'ES256' })}.bm90IGpzb24.AA`,
      `${encode({ alg: 'ES256' })}.${encode({})}.A+A`,
      `${encode({ alg: 'ES256', crit: ['exp'], exp: 1 })}.${encode({})}.AA`,
      `${encode({ alg: 'ES256', b64: false, crit: ['b64'] })}.${encode({})}.AA`,
    ])
      rejects(() => decodeCompactJws(token), 'malformed');
  });

  test('a symmetric or broken JWK is not a public key', () => {
    rejects(() => publicKeyFromJwk({ kty: 'oct', k: 'c2VjcmV0' }), 'key');
    rejects(() => publicKeyFromJwk({ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }), 'key');
    rejects(() => publicKeyFromJwk('{"kty":"EC"}'), 'key');
    rejects(() => publicKeyFromJwk(null), 'key');
  });

  test('an ES256 token signed here verifies with jose, with the header and claims given', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const token = signCompactJwsES256(
      { typ: 'at+jwt', kid: 'k1' },
      { iss: 'https://coffer.example', sub: '7', exp: Math.floor(Date.now() / 1000) + 60 },
      privateKey,
    );
    const jwk = await importJWK(publicKey.export({ format: 'jwk' }) as never, 'ES256');
    const { payload, protectedHeader } = await jwtVerify(token, jwk, {
      algorithms: ['ES256'],
      typ: 'at+jwt',
      issuer: 'https://coffer.example',
    });
    assert.deepEqual(protectedHeader, { alg: 'ES256', typ: 'at+jwt', kid: 'k1' });
    assert.equal(payload.sub, '7');
  });
});
