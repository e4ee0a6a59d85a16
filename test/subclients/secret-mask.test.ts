import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { createSecretMasker } from '../../src/subclients/secret-mask.ts';

test('masks show the last four characters, remembered per ciphertext and row', () => {
  const cipher = createFieldCipher(randomBytes(32));
  const mask = createSecretMasker(cipher);
  const where = 'clients/7/esp_token';
  assert.equal(mask(null, where), '');
  assert.equal(mask(cipher.encrypt('', where), where), '');
  const sealed = cipher.encrypt('esp-secret-1234', where);
  assert.equal(mask(sealed, where), '••••1234');
  assert.equal(mask(sealed, where), '••••1234');
  // A new secret is a new ciphertext, so its mask is never an old one.
  assert.equal(mask(cipher.encrypt('esp-secret-9876', where), where), '••••9876');
  // A ciphertext copied into another row still fails to open, remembered or not.
  assert.throws(() => mask(sealed, 'clients/8/esp_token'));
});
