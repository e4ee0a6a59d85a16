import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { create } from 'kubo-rpc-client';
import {
  computeCid,
  createContentStore,
  createEncryptedStore,
  createKuboBackend,
  encodeValue,
  StorageError,
} from '../../src/storage/index.ts';
import { MASTER_KEY, profile, tempDir } from './helpers.ts';
import { closedPort, type KuboStandIn, startKuboStandIn } from './kubo-stand-in.ts';

const ALICE = { owner: 'user:41', kind: 'profile' };

async function standIn(t: TestContext): Promise<KuboStandIn> {
  const kubo = await startKuboStandIn();
  t.after(() => kubo.close());
  return kubo;
}

test('encrypted blocks round-trip through Kubo, named alike on both sides and all pinned', async (t) => {
  const kubo = await standIn(t);
  const store = createEncryptedStore({
    backend: 'kubo',
    dataDir: await tempDir(t),
    kuboApiUrl: kubo.url,
    masterKey: MASTER_KEY,
  });
  await store.check();
  const values = [profile(), { ...profile(), email: 'b@example.org' }, { tiny: 1 }, profile()];
  const cids = [];
  for (const value of values) cids.push(await store.putEncrypted(value, ALICE));
  for (const [i, cid] of cids.entries()) assert.deepEqual(await store.getEncrypted(cid, ALICE), values[i]);

  assert.deepEqual([...kubo.blocks.keys()].sort(), [...cids].sort());
  assert.deepEqual([...kubo.pins].sort(), [...cids].sort());
  const puts = kubo.requests.filter((r) => r.path === '/api/v0/block/put');
  assert.equal(puts.length, cids.length);
  for (const put of puts) {
    assert.equal(put.query['cid-codec'], 'dag-cbor');
    assert.equal(put.query['mhtype'], 'sha2-256');
  }
  const gets = kubo.requests.filter((r) => r.path === '/api/v0/block/get');
  assert.deepEqual(gets.map((r) => r.query['arg']).sort(), [...cids].sort());
  assert.ok(gets.every((r) => r.query['offline'] === 'true'));
});

test('the content store over Kubo reproduces Kubo’s CIDs for plain values too', async (t) => {
  const kubo = await standIn(t);
  const backend = createKuboBackend(kubo.url);
  const store = createContentStore(backend);
  const cid = await store.put({ foo: 'bar' });
  // The vector of kubo-dag-put.json for {"foo":"bar"} as dag-cbor.
  assert.equal(cid.toString(), 'bafyreiblaotetvwobe7cu2uqvnddr6ew2q3cu75qsoweulzku2egca4dxq');
  assert.ok(kubo.blocks.has(cid.toString()));
  assert.deepEqual(await store.get(cid), { foo: 'bar' });
  assert.equal(await backend.has(cid), true);
  const absent = await computeCid(encodeValue({ foo: 'baz' }));
  assert.equal(await backend.has(absent), false);
});

test('bytes from Kubo that do not match the CID are an integrity_error', async (t) => {
  const kubo = await standIn(t);
  const store = createEncryptedStore({
    backend: 'kubo',
    dataDir: await tempDir(t),
    kuboApiUrl: kubo.url,
    masterKey: MASTER_KEY,
  });
  const cid = await store.putEncrypted(profile(), ALICE);
  kubo.faults.corruptGets = true;
  await assert.rejects(store.getEncrypted(cid, ALICE), { name: 'StorageError', code: 'integrity_error' });
  kubo.faults.corruptGets = false;
  assert.deepEqual(await store.getEncrypted(cid, ALICE), profile());
});

test('a CID from Kubo that differs from Coffer’s is an integrity_error, and nothing is pinned', async (t) => {
  const kubo = await standIn(t);
  kubo.faults.misnamePuts = true;
  const store = createContentStore(createKuboBackend(kubo.url));
  await assert.rejects(store.put({ foo: 'bar' }), { name: 'StorageError', code: 'integrity_error' });
  assert.equal(kubo.pins.size, 0);
});

test('an unknown CID is block_not_found', async (t) => {
  const kubo = await standIn(t);
  const store = createEncryptedStore({
    backend: 'kubo',
    dataDir: await tempDir(t),
    kuboApiUrl: kubo.url,
    masterKey: MASTER_KEY,
  });
  const absent = (await computeCid(encodeValue({ never: 'stored' }))).toString();
  await assert.rejects(store.getEncrypted(absent, ALICE), { name: 'StorageError', code: 'block_not_found' });
});

test('an unreachable Kubo is backend_unavailable for every operation', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const store = createEncryptedStore({
    backend: 'kubo',
    dataDir: await tempDir(t),
    kuboApiUrl: url,
    masterKey: MASTER_KEY,
  });
  const cid = (await computeCid(encodeValue({ x: 1 }))).toString();
  const unavailable = (error: unknown) =>
    error instanceof StorageError && error.code === 'backend_unavailable' && error.message.includes(url);
  await assert.rejects(store.check(), unavailable);
  await assert.rejects(store.putEncrypted(profile(), ALICE), unavailable);
  await assert.rejects(store.getEncrypted(cid, ALICE), unavailable);
});

test('a Kubo that does not answer in time is backend_unavailable', async (t) => {
  // Accepts requests and never answers them.
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  const backend = createKuboBackend(`http://127.0.0.1:${port}`, { timeoutMs: 200 });
  await assert.rejects(backend.check(), { name: 'StorageError', code: 'backend_unavailable' });
});

test('the stand-in itself refuses what Kubo refuses', async (t) => {
  const kubo = await standIn(t);
  const client = create({ url: kubo.url });
  // Not dag-cbor, though declared so.
  const junk = { cidCodec: 'dag-cbor', mhtype: 'sha2-256' };
  await assert.rejects(client.block.put(new Uint8Array([0xff, 0xfe]), junk), /not valid dag-cbor/);
  await assert.rejects(
    client.pin.add('bafyreiblaotetvwobe7cu2uqvnddr6ew2q3cu75qsoweulzku2egca4dxq'),
    /not found/,
  );
  // Without cid-codec Kubo names the block raw, which is why Coffer must always send it.
  const bytes = encodeValue({ foo: 'bar' });
  const named = await client.block.put(bytes);
  assert.equal(named.code, 0x55);
  assert.deepEqual(named.multihash.bytes, (await computeCid(bytes)).multihash.bytes);
  assert.equal(kubo.blocks.size, 1);
});

test('removing a block unpins it in Kubo (its bytes go at the next GC); removing again is harmless', async (t) => {
  const kubo = await standIn(t);
  const store = createEncryptedStore({
    backend: 'kubo',
    dataDir: await tempDir(t),
    kuboApiUrl: kubo.url,
    masterKey: MASTER_KEY,
  });
  const kept = await store.putEncrypted(profile(), ALICE);
  const removed = await store.putEncrypted(profile(), ALICE);
  await store.removeEncrypted(removed);
  assert.deepEqual([...kubo.pins], [kept]);
  const unpins = kubo.requests.filter((r) => r.path === '/api/v0/pin/rm');
  assert.deepEqual(
    unpins.map((r) => r.query['arg']),
    [removed],
  );
  await store.removeEncrypted(removed);
});
