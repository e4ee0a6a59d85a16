import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import * as dagJson from '@ipld/dag-json';
import {
  type CodecName,
  computeCid,
  encodeValue,
  parseCid,
  StorageError,
  verifyBlock,
} from '../../src/storage/index.ts';
import { projectRoot } from './helpers.ts';

interface Vector {
  input_dag_json: string;
  store_codec: CodecName;
  cid: string;
}

test('reproduces every CID of Kubo’s dag put vectors', async () => {
  const file = path.resolve(projectRoot, '../shared/vectors/kubo-dag-put.json');
  const { vectors } = JSON.parse(await readFile(file, 'utf8')) as { vectors: Vector[] };
  assert.equal(vectors.length, 6);
  for (const vector of vectors) {
    // Kubo decodes the dag-json input, then stores it re-encoded with the store codec.
    const value = dagJson.decode(new TextEncoder().encode(vector.input_dag_json));
    const cid = await computeCid(encodeValue(value, vector.store_codec), vector.store_codec);
    assert.equal(cid.toString(), vector.cid, `${vector.store_codec} of ${vector.input_dag_json}`);
  }
});

test('parseCid accepts Coffer’s CIDs and rejects anything else with a clear error', async () => {
  const cid = await computeCid(encodeValue({ a: 1 }));
  assert.ok(parseCid(cid.toString()).equals(cid));
  for (const text of ['not-a-cid', '', 'bafy', 'QmYNmQKp6SuaVrpgWRsPTgCQCnpxUYGq76YEKBXuj2N4H6']) {
    assert.throws(
      () => parseCid(text),
      (error: unknown) =>
        error instanceof StorageError && error.code === 'block_not_found' && /CID/.test(error.message),
      text,
    );
  }
  // A raw-codec CIDv1: valid, but never a Coffer block.
  assert.throws(() => parseCid('bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'), /codec 0x55/);
});

test('verifyBlock rejects bytes that do not hash to the CID', async () => {
  const bytes = encodeValue({ hello: 'world' });
  const cid = await computeCid(bytes);
  await verifyBlock(cid, bytes);
  const altered = Uint8Array.from(bytes);
  altered[altered.length - 1]! ^= 0x01;
  await assert.rejects(verifyBlock(cid, altered), { name: 'StorageError', code: 'integrity_error' });
});
