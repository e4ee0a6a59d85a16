import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { base58btc } from 'multiformats/bases/base58';
import { DidResolutionError, resolveDidKey } from '../../src/formats/did-resolution.ts';
import { takesAlgorithm } from '../../src/formats/jose-credentials.ts';
import { presentationFrameOf } from '../../src/formats/sd-jwt-vc/presentation-frame.ts';

const claims = {
  given_name: 'Ada',
  address: { street_address: '12 St James Square', locality: 'London' },
  nationalities: ['GB', 'FR'],
};

test('an SD-JWT presentation frame names exactly the pointed-at claims, an object or array whole', () => {
  assert.deepEqual(presentationFrameOf(claims, ['/given_name', '/address/locality', '/nationalities/1']), {
    given_name: true,
    address: { locality: true },
    nationalities: { 1: true },
  });
  assert.deepEqual(presentationFrameOf(claims, ['/address']), {
    address: { street_address: true, locality: true },
  });
  assert.deepEqual(presentationFrameOf({ 'a/b': { 'c~d': 1 } }, ['/a~1b/c~0d']), { 'a/b': { 'c~d': true } });
});

test("a credential's __proto__ claim, asked for by a verifier, is framed as data and pollutes no prototype", () => {
  // JSON.parse makes "__proto__" an own member, as a held credential's claims are parsed.
  const held = JSON.parse('{"__proto__": {"polluted": "yes"}, "given_name": "Ada"}');
  try {
    const frame = presentationFrameOf(held, ['/__proto__/polluted', '/given_name']);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined, 'Object.prototype is untouched');
    assert.deepEqual(Object.keys(frame).sort(), ['__proto__', 'given_name']);
    assert.equal(Object.getOwnPropertyDescriptor(frame, '__proto__')?.value?.polluted, true);
    // An inherited member is not a claim: nothing is framed for it.
    assert.deepEqual(Object.keys(presentationFrameOf({ given_name: 'Ada' }, ['/constructor/name'])), [
      'constructor',
    ]);
  } finally {
    delete (Object.prototype as Record<string, unknown>)['polluted'];
  }
});

test('did:key (Ed25519, P-256) and did:jwk resolve locally; anything else is refused', () => {
  const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  const edDid = `did:key:${base58btc.encode(Uint8Array.from([0xed, 0x01, ...Buffer.from(ed.x!, 'base64url')]))}`;
  assert.deepEqual(resolveDidKey(`${edDid}#${edDid.slice(8)}`).jwk, { kty: 'OKP', crv: 'Ed25519', x: ed.x });

  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
  const compressed = p256.export({ format: 'der', type: 'spki' }).subarray(-65);
  const point = Uint8Array.from([compressed[64]! % 2 === 0 ? 2 : 3, ...compressed.subarray(1, 33)]);
  const p256Did = `did:key:${base58btc.encode(Uint8Array.from([0x80, 0x24, ...point]))}`;
  assert.equal(resolveDidKey(p256Did).jwk.x, p256.export({ format: 'jwk' }).x);
  assert.equal(resolveDidKey(p256Did).jwk.y, p256.export({ format: 'jwk' }).y);

  const jwk = { kty: 'OKP', crv: 'Ed25519', x: ed.x };
  const jwkDid = `did:jwk:${Buffer.from(JSON.stringify(jwk)).toString('base64url')}`;
  assert.deepEqual(resolveDidKey(`${jwkDid}#0`), { did: jwkDid, jwk });

  for (const bad of [
    'did:web:issuer.example',
    `${edDid}#other`,
    'did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme',
    `did:jwk:${Buffer.from('{"kty":"OKP","d":"secret"}').toString('base64url')}`,
    'did:jwk:not-json',
  ]) {
    assert.throws(() => resolveDidKey(bad), DidResolutionError, bad);
  }
});

test('algorithm lists: absent takes any; EdDSA and its fully specified name Ed25519 are one', () => {
  assert.equal(takesAlgorithm(undefined, 'ES256'), true);
  assert.equal(takesAlgorithm(['Ed25519'], 'EdDSA'), true);
  assert.equal(takesAlgorithm(['EdDSA'], 'EdDSA'), true);
  assert.equal(takesAlgorithm(['ES256'], 'EdDSA'), false);
  assert.equal(takesAlgorithm(['ES384'], 'ES256'), false);
});
