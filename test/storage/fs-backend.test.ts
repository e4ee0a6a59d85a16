import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { computeCid, createFsBackend, encodeValue } from '../../src/storage/index.ts';
import { filesUnder, tempDir } from './helpers.ts';

test('blocks land in shard directories, complete, with no temporary files left', async (t) => {
  const dir = path.join(await tempDir(t), 'blocks');
  const backend = createFsBackend(dir);
  const written = [];
  for (let i = 0; i < 20; i++) {
    const bytes = encodeValue({ i, padding: 'x'.repeat(i * 100) });
    const cid = await computeCid(bytes);
    await backend.put(cid, bytes);
    written.push({ cid, bytes });
  }
  const files = await filesUnder(dir);
  assert.equal(files.length, written.length);
  assert.deepEqual(
    files.filter(({ file }) => file.endsWith('.tmp') || path.basename(file).startsWith('.')),
    [],
  );
  for (const { cid, bytes } of written) {
    const name = cid.toString();
    const file = files.find((f) => path.basename(f.file) === name);
    assert.ok(file, `${name} stored`);
    assert.equal(path.basename(path.dirname(file.file)), name.slice(-3, -1));
    assert.ok(file.bytes.equals(bytes));
    assert.ok(Buffer.from(await backend.get(cid)).equals(bytes));
    assert.equal(await backend.has(cid), true);
  }
});

test('writing a block that exists leaves its file and only refreshes its time', async (t) => {
  const dir = await tempDir(t);
  const backend = createFsBackend(dir);
  const bytes = encodeValue({ same: true });
  const cid = await computeCid(bytes);
  await backend.put(cid, bytes);
  const file = path.join(dir, cid.toString().slice(-3, -1), cid.toString());
  const anHourAgo = new Date(Date.now() - 3600_000);
  await utimes(file, anHourAgo, anHourAgo);
  const before = await stat(file);
  await backend.put(cid, bytes);
  const after = await stat(file);
  // A rewrite would rename a new file into place and change the inode.
  assert.equal(after.ino, before.ino);
  // Written again, the block counts as new for storage collection's grace period.
  assert.ok(after.mtimeMs > before.mtimeMs + 3000_000);
  assert.deepEqual(await readdir(path.dirname(file)), [cid.toString()], 'no temporary file is left');
});

test('concurrent puts of the same block all succeed and leave one complete file', async (t) => {
  const dir = await tempDir(t);
  const backend = createFsBackend(dir);
  const bytes = encodeValue({ contended: 'y'.repeat(50_000) });
  const cid = await computeCid(bytes);
  await Promise.all(Array.from({ length: 25 }, () => backend.put(cid, bytes)));
  const shard = path.join(dir, cid.toString().slice(-3, -1));
  assert.deepEqual(await readdir(shard), [cid.toString()]);
  assert.ok(Buffer.from(await backend.get(cid)).equals(bytes));
});

test('concurrent puts of different blocks into a new directory all succeed', async (t) => {
  const dir = path.join(await tempDir(t), 'not', 'yet', 'there');
  const backend = createFsBackend(dir);
  const blocks = await Promise.all(
    Array.from({ length: 40 }, async (_, i) => {
      const bytes = encodeValue({ i });
      return { cid: await computeCid(bytes), bytes };
    }),
  );
  await Promise.all(blocks.map(({ cid, bytes }) => backend.put(cid, bytes)));
  assert.equal((await filesUnder(dir)).length, 40);
  for (const { cid, bytes } of blocks) assert.ok(Buffer.from(await backend.get(cid)).equals(bytes));
});

test('a block its readers can do without (durable: false) lands complete in its shard, written again or at once', async (t) => {
  const dir = path.join(await tempDir(t), 'blocks');
  const backend = createFsBackend(dir);
  const bytes = encodeValue({ prepared: 'statements', padding: 'p'.repeat(5000) });
  const cid = await computeCid(bytes);
  await Promise.all(Array.from({ length: 5 }, () => backend.put(cid, bytes, { durable: false })));
  await backend.put(cid, bytes, { durable: false });
  assert.deepEqual(await backend.get(cid), bytes);
  const files = await filesUnder(dir);
  assert.deepEqual(
    files.map(({ file }) => path.relative(dir, file)),
    [path.join(cid.toString().slice(-3, -1), cid.toString())],
    'one file, no temporary file left',
  );
});

test('an unknown block is block_not_found; has() is false', async (t) => {
  const backend = createFsBackend(await tempDir(t));
  const cid = await computeCid(encodeValue({ never: 'stored' }));
  assert.equal(await backend.has(cid), false);
  await assert.rejects(backend.get(cid), { name: 'StorageError', code: 'block_not_found' });
});

test('check() creates the directory, and fails as backend_unavailable when it cannot be used', async (t) => {
  const root = await tempDir(t);
  await createFsBackend(path.join(root, 'blocks')).check();
  assert.ok((await stat(path.join(root, 'blocks'))).isDirectory());
  // A regular file where the directory should be.
  const bytes = encodeValue({ f: 1 });
  const cid = await computeCid(bytes);
  await createFsBackend(root).put(cid, bytes);
  const blocker = path.join(root, cid.toString().slice(-3, -1), cid.toString());
  const broken = createFsBackend(path.join(blocker, 'blocks'));
  await assert.rejects(broken.check(), { name: 'StorageError', code: 'backend_unavailable' });
  await assert.rejects(broken.put(cid, bytes), { name: 'StorageError', code: 'backend_unavailable' });
});

test('thousands of reads at once stay within a small descriptor limit (no EMFILE)', async (t) => {
  // A person with thousands of credentials, listed by several clients at once, asked for more open
  // files than the process may hold. A child process with `ulimit -n 1024` shows it on any machine.
  const dir = path.join(await tempDir(t), 'blocks');
  const script = `
    import { computeCid, createFsBackend, encodeValue } from ${JSON.stringify(path.resolve('src/storage/index.ts'))};
    const backend = createFsBackend(${JSON.stringify(dir)});
    const blocks = [];
    for (let i = 0; i < 50; i++) {
      const bytes = encodeValue({ i });
      blocks.push({ cid: await computeCid(bytes), bytes });
    }
    await Promise.all(blocks.map(({ cid, bytes }) => backend.put(cid, bytes)));
    const reads = await Promise.all(Array.from({ length: 3000 }, (_, i) => backend.get(blocks[i % 50].cid)));
    console.log(JSON.stringify({ reads: reads.length, bytes: reads.every((r, i) => r.length === blocks[i % 50].bytes.length) }));
  `;
  const { stdout } = await promisify(execFile)(
    'bash',
    ['-c', 'ulimit -n 1024 && exec "$0" --input-type=module -e "$1"', process.execPath, script],
    { cwd: process.cwd() },
  );
  assert.deepEqual(JSON.parse(stdout), { reads: 3000, bytes: true });
});
