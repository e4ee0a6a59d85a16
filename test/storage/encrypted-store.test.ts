import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import {
  createContentStore,
  createEncryptedStore,
  createEnvelopeCipher,
  createFsBackend,
  type Envelope,
  StorageError,
} from '../../src/storage/index.ts';
import { filesUnder, MASTER_KEY, OTHER_MASTER_KEY, profile, tempDir } from './helpers.ts';

const ALICE = { owner: 'user:41', kind: 'profile' };

function blockFile(dataDir: string, cid: string): string {
  return path.join(dataDir, 'blocks', cid.slice(-3, -1), cid);
}

function storageError(code: StorageError['code'], message?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof StorageError, `expected a StorageError, got ${error}`);
    assert.equal(error.code, code);
    if (message) assert.match(error.message, message);
    return true;
  };
}

test('a profile round-trips through the encrypted fs store', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  await store.check();
  const cid = await store.putEncrypted(profile(), ALICE);
  assert.match(cid, /^bafyrei[a-z2-7]{52}$/);
  assert.deepEqual(await store.getEncrypted(cid, ALICE), profile());
  // Another instance with the same master key (a restart, or a second server) reads it too.
  const again = createEncryptedStore({ backend: 'fs', dataDir, masterKey: Uint8Array.from(MASTER_KEY) });
  assert.deepEqual(await again.getEncrypted(cid, ALICE), profile());
});

test('the same value stored twice gets two CIDs', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  // Expected: each envelope has a fresh random IV, so its bytes and CID differ. Equal CIDs would
  // mean a reused IV, which breaks AES-GCM, and would reveal that two users share a value.
  const first = await store.putEncrypted(profile(), ALICE);
  const second = await store.putEncrypted(profile(), ALICE);
  assert.notEqual(first, second);
  assert.deepEqual(await store.getEncrypted(first, ALICE), await store.getEncrypted(second, ALICE));
});

test('no plaintext reaches the block files', async (t) => {
  const secrets = ['ada.lovelace@example.org', 'Lovelace-Byron', '7700900123'];
  const found = (files: Array<{ bytes: Buffer }>) =>
    secrets.filter((secret) => files.some(({ bytes }) => bytes.includes(Buffer.from(secret, 'utf8'))));

  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  await store.putEncrypted(profile(), ALICE);
  await store.putEncrypted({ nested: [profile(), profile()] }, { owner: 'user:42', kind: 'profile' });
  const files = await filesUnder(path.join(dataDir, 'blocks'));
  assert.equal(files.length, 2);
  assert.deepEqual(found(files), []);

  // The scan itself works: the same value stored without encryption is found.
  const plainDir = await tempDir(t);
  await createContentStore(createFsBackend(plainDir)).put(profile());
  assert.deepEqual(found(await filesUnder(plainDir)), secrets);
});

test('a flipped byte in a block file is an integrity_error, never data', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  const cid = await store.putEncrypted(profile(), ALICE);
  const file = blockFile(dataDir, cid);
  const bytes = await readFile(file);
  for (const index of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
    const altered = Buffer.from(bytes);
    altered[index]! ^= 0x20;
    await writeFile(file, altered);
    await assert.rejects(store.getEncrypted(cid, ALICE), storageError('integrity_error', /altered/));
  }
  await writeFile(file, bytes);
  assert.deepEqual(await store.getEncrypted(cid, ALICE), profile());
});

test('a forged envelope stored under its own correct CID fails to decrypt', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  const content = createContentStore(createFsBackend(path.join(dataDir, 'blocks')));
  const cid = await store.putEncrypted(profile(), ALICE);
  const envelope = (await content.get(cid)) as Envelope;
  for (const field of ['iv', 'ct'] as const) {
    const forged = { ...envelope, [field]: Uint8Array.from(envelope[field]) };
    forged[field][0]! ^= 0x01;
    const forgedCid = await content.put(forged);
    await assert.rejects(store.getEncrypted(forgedCid.toString(), ALICE), storageError('decryption_failed'));
  }
  // A block that is not an envelope at all.
  const notEnvelope = await content.put({ hello: 'world' });
  await assert.rejects(
    store.getEncrypted(notEnvelope.toString(), ALICE),
    storageError('decryption_failed', /not an encrypted envelope/),
  );
});

test('another master key is recognised and fails with decryption_failed', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  const cid = await store.putEncrypted(profile(), ALICE);
  const other = createEncryptedStore({ backend: 'fs', dataDir, masterKey: OTHER_MASTER_KEY });
  const ourKid = createEnvelopeCipher(MASTER_KEY).kid;
  await assert.rejects(
    other.getEncrypted(cid, ALICE),
    storageError('decryption_failed', new RegExp(`encrypted under key ${ourKid}.*MASTER_KEY differs`)),
  );
});

test('another owner or kind fails with decryption_failed', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  const cid = await store.putEncrypted(profile(), ALICE);
  for (const context of [
    { owner: 'user:42', kind: 'profile' },
    { owner: 'user:41', kind: 'credential' },
    { owner: 'user:4', kind: '1profile' },
  ]) {
    await assert.rejects(
      store.getEncrypted(cid, context),
      storageError('decryption_failed', /owner and kind/),
    );
  }
  assert.deepEqual(await store.getEncrypted(cid, ALICE), profile());
});

test('an unknown CID is block_not_found; a malformed one says it is not a CID', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  const elsewhere = createEncryptedStore({ backend: 'fs', dataDir: await tempDir(t), masterKey: MASTER_KEY });
  const cid = await elsewhere.putEncrypted(profile(), ALICE);
  await assert.rejects(store.getEncrypted(cid, ALICE), storageError('block_not_found', /not stored/));
  await assert.rejects(
    store.getEncrypted('bafy-not-a-cid', ALICE),
    storageError('block_not_found', /not a valid CID/),
  );
});

test('values need an owner and kind, and the master key must be 32 bytes', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY });
  await assert.rejects(store.putEncrypted(profile(), { owner: '', kind: 'profile' }), TypeError);
  await assert.rejects(store.putEncrypted(profile(), { owner: 'user:1', kind: '' }), TypeError);
  assert.throws(
    () => createEncryptedStore({ backend: 'fs', dataDir, masterKey: new Uint8Array(16) }),
    TypeError,
  );
  assert.throws(
    () => createEncryptedStore({ backend: 'kubo', dataDir, masterKey: MASTER_KEY }),
    /kuboApiUrl/,
  );
});

test('a removed block is gone from the files and the cache; removing it again is harmless', async (t) => {
  const dataDir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir, masterKey: MASTER_KEY, cacheBytes: 1 << 20 });
  const kept = await store.putEncrypted(profile(), ALICE);
  const removed = await store.putEncrypted(profile(), ALICE);
  assert.deepEqual(await store.getEncrypted(removed, ALICE), profile(), 'read once: now cached');
  await store.removeEncrypted(removed);
  await assert.rejects(readFile(blockFile(dataDir, removed)), { code: 'ENOENT' });
  await assert.rejects(store.getEncrypted(removed, ALICE), storageError('block_not_found'));
  await store.removeEncrypted(removed);
  assert.deepEqual(await store.getEncrypted(kept, ALICE), profile());
});
