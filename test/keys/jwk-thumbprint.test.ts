import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { jwkThumbprint } from '../../src/keys/jwk-thumbprint.ts';

describe('JWK thumbprints (RFC 7638)', () => {
  it("equal jose's for EC, OKP and RSA keys, public or private, whatever other members they carry", async () => {
    const pairs = [
      generateKeyPairSync('ec', { namedCurve: 'P-256' }),
      generateKeyPairSync('ec', { namedCurve: 'P-384' }),
      generateKeyPairSync('ed25519'),
      generateKeyPairSync('rsa', { modulusLength: 2048 }),
    ];
    for (const { publicKey, privateKey } of pairs) {
      const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid: 'ignored', use: 'sig' };
      const privateJwk = privateKey.export({ format: 'jwk' });
      const expected = await calculateJwkThumbprint(publicJwk as JWK, 'sha256');
      assert.equal(jwkThumbprint(publicJwk), expected);
      assert.equal(jwkThumbprint(privateJwk), expected);
    }
  });

  it('matches the example of RFC 7638 §3.1', () => {
    const jwk = {
      kty: 'RSA',
      n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    assert.equal(jwkThumbprint(jwk), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('refuses a key without the members of its type, or of a type it does not know', () => {
    assert.throws(() => jwkThumbprint({ kty: 'EC', crv: 'P-256', x: 'AA' }));
    assert.throws(() => jwkThumbprint({ kty: 'oct', k: 'AA' }));
    assert.throws(() => jwkThumbprint({ kty: 'EC', crv: 'P-256', x: 'AA', y: 5 }));
  });
});
