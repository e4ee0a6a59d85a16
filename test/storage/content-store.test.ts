import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CID } from 'multiformats/cid';
import { createContentStore, createFsBackend } from '../../src/storage/index.ts';
import { tempDir } from './helpers.ts';

test('put returns the CID of the dag-cbor block; get returns the value, links included', async (t) => {
  const store = createContentStore(createFsBackend(await tempDir(t)));
  const link = CID.parse('QmYNmQKp6SuaVrpgWRsPTgCQCnpxUYGq76YEKBXuj2N4H6');
  const value = { foo: 'bar', n: [1, 2, 3], bytes: new Uint8Array([0, 1, 2]), link };
  const cid = await store.put(value);
  assert.equal(cid.code, 0x71);
  assert.equal(cid.version, 1);
  assert.equal(cid.multihash.code, 0x12);
  assert.deepEqual(await store.get(cid), value);
  assert.deepEqual(await store.get(cid.toString()), value);
  // Same value, same block: content addressing is deterministic without encryption.
  assert.ok(
    (await store.put({ n: [1, 2, 3], link, bytes: new Uint8Array([0, 1, 2]), foo: 'bar' })).equals(cid),
  );
});

test('dag-json blocks are stored and read too', async (t) => {
  const store = createContentStore(createFsBackend(await tempDir(t)));
  const cid = await store.put({ foo: 'bar' }, 'dag-json');
  assert.equal(cid.code, 0x0129);
  assert.deepEqual(await store.get(cid), { foo: 'bar' });
});
