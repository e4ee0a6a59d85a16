import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { readConfig } from '../../src/config/config.ts';
import { createEmailIndex, createEmailIndexes } from '../../src/keys/blind-index.ts';
import { deriveKey } from '../../src/keys/derive-key.ts';
import { createFieldCipher, sealedKeyId } from '../../src/keys/field-cipher.ts';
import { fixedKeyRing, masterKeyId } from '../../src/keys/master-key-ring.ts';
import { createEnvelopeCipher } from '../../src/storage/index.ts';

const A = randomBytes(32);
const B = randomBytes(32);
const AAD = 'users/did:key:z6Mk/holder_key';

/** A value as the field cipher sealed it before key ids (format v1). */
function sealV1(masterKey: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(masterKey, 'field-encryption/v1'), iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

test('sealed fields name their key; the ring opens v2 by key id and v1 with whichever key fits', () => {
  const ring = createFieldCipher(fixedKeyRing(B, [A]));
  const sealed = ring.encrypt('secret', AAD);
  assert.equal(sealedKeyId(sealed), masterKeyId(B));
  assert.equal(ring.kid, masterKeyId(B));
  assert.equal(ring.decrypt(createFieldCipher(A).encrypt('old', AAD), AAD), 'old');
  assert.equal(ring.decrypt(sealV1(A, 'older', AAD), AAD), 'older');
  assert.equal(ring.decrypt(sealV1(B, 'v1 under B', AAD), AAD), 'v1 under B');
  assert.throws(
    () => createFieldCipher(B).decrypt(createFieldCipher(A).encrypt('x', AAD), AAD),
    /does not hold/,
  );
  assert.throws(() => createFieldCipher(B).decrypt(sealV1(A, 'x', AAD), AAD));
  assert.throws(() => ring.decrypt(sealed, 'another row'));
});

test('envelopes open under the ring key their kid names and are sealed under the current one', () => {
  const context = { owner: 'did:key:z6Mk', kind: 'profile' };
  const old = createEnvelopeCipher(A).seal({ a: 1 }, context);
  const ring = createEnvelopeCipher(fixedKeyRing(B, [A]));
  assert.deepEqual(ring.open(old, context), { a: 1 });
  assert.equal(ring.seal({ a: 2 }, context).kid, masterKeyId(B));
  assert.throws(() => createEnvelopeCipher(B).open(old, context), /MASTER_KEY differs/);
});

test('an e-mail has one index per key of the ring, the current first', () => {
  const indexes = createEmailIndexes(fixedKeyRing(B, [A]))(' Person@Example.org ');
  assert.deepEqual(indexes, [
    createEmailIndex(B)('person@example.org'),
    createEmailIndex(A)('person@example.org'),
  ]);
});

test('MASTER_KEY_PREVIOUS takes base64 keys of 32 bytes separated by commas', () => {
  const previous = `${A.toString('base64')}, ${B.toString('base64')}`;
  assert.deepEqual(readConfig({ MASTER_KEY_PREVIOUS: previous }).masterKeyPrevious, [
    A.toString('base64'),
    B.toString('base64'),
  ]);
  assert.deepEqual(readConfig({}).masterKeyPrevious, []);
  assert.throws(
    () => readConfig({ MASTER_KEY_PREVIOUS: `${A.toString('base64')},short` }),
    /MASTER_KEY_PREVIOUS/,
  );
});
