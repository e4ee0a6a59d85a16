import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { test } from 'node:test';
import { base58btc } from 'multiformats/bases/base58';
import {
  didKeyFromEd25519PublicKey,
  didOfPrivateJwk,
  ed25519PublicKeyFromDidKey,
  generateHolderKey,
} from '../../src/keys/holder-key.ts';

// RFC 8032 §7.1 test 1. Its did:key was computed independently (Python, multicodec 0xed01 +
// base58btc) and matches what other did:key implementations publish for this key.
const RFC8032_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const RFC8032_PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const RFC8032_DID = 'did:key:z6MktwupdmLXVVqTzCw4i46r4uGyosGXRnR3XjN4Zq7oMMsw';

/** did:key documents published with their public keys in base58 (Ed25519VerificationKey2018). */
const PUBLISHED = [
  [
    '8HH5gYEeNc3z7PYXmd54d4x6qAfCNrqQqEB3nS7Zfu7K',
    'did:key:z6MkmjY8GnV5i9YTDtPETC2uUAW6ejw3nk5mXF5yci5ab7th',
  ],
  [
    'HC8vuuvP8x9kVJizh2eujQjo2JwFQJz6w63szzdbu1Q7',
    'did:key:z6MkvePyWAApUVeDboZhNbckaWHnqtD6pCETd6xoqGbcpEBV',
  ],
] as const;

/** base58btc without the multibase prefix, as publicKeyBase58 writes it. */
const fromBase58 = (text: string) => base58btc.baseDecode(text);

test('a known Ed25519 public key maps to its known did:key', () => {
  assert.equal(didKeyFromEd25519PublicKey(Buffer.from(RFC8032_PUBLIC, 'hex')), RFC8032_DID);
  for (const [publicKeyBase58, did] of PUBLISHED) {
    assert.equal(didKeyFromEd25519PublicKey(fromBase58(publicKeyBase58)), did);
  }
});

test('the DID of a private key is derived from the private part', () => {
  // PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410).
  const pkcs8 = Buffer.concat([
    Buffer.from('302e020100300506032b657004220420', 'hex'),
    Buffer.from(RFC8032_SEED, 'hex'),
  ]);
  const jwk = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  assert.equal(didOfPrivateJwk(jwk), RFC8032_DID);
  assert.equal(didOfPrivateJwk({ ...jwk, x: Buffer.alloc(32).toString('base64url') }), RFC8032_DID);
});

test('did:key decodes back to the public key and refuses other key types', () => {
  assert.equal(Buffer.from(ed25519PublicKeyFromDidKey(RFC8032_DID)).toString('hex'), RFC8032_PUBLIC);
  assert.throws(() =>
    ed25519PublicKeyFromDidKey('did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169'),
  );
  assert.throws(() => ed25519PublicKeyFromDidKey('did:web:example.com'));
  assert.throws(() => didKeyFromEd25519PublicKey(new Uint8Array(31)));
});

test('a generated holder key signs, and its DID names the key that verifies', () => {
  const holder = generateHolderKey();
  assert.match(holder.did, /^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]{44}$/);
  assert.equal(didOfPrivateJwk(holder.privateJwk), holder.did);
  const message = Buffer.from('hello');
  const signature = sign(null, message, createPrivateKey({ key: holder.privateJwk, format: 'jwk' }));
  const publicKey = createPublicKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      x: Buffer.from(ed25519PublicKeyFromDidKey(holder.did)).toString('base64url'),
    },
    format: 'jwk',
  });
  assert.ok(verify(null, message, publicKey, signature));
  assert.notEqual(generateHolderKey().did, holder.did);
});
