import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createContextRegistry } from '../../src/credentials/contexts/document-loader.ts';
import { createPooledOperations } from '../../src/credentials/crypto-pool.ts';
import { readVector, vectorPublicKey } from './vectors.ts';

test('the crypto pool finishes tasks in the order they arrived, so no request waits behind later ones', async (t) => {
  const pool = createPooledOperations({ threads: 1, contexts: createContextRegistry(async () => undefined) });
  t.after(() => pool.close());
  const signed = readVector('addSignedSDBase.json');
  const publicKey = vectorPublicKey();
  const first = await pool.verifyBaseProof(signed, publicKey, { prepare: true });
  assert.equal(
    first.ok && first.prepared?.version,
    1,
    'a valid check in a worker brings its prepared statements',
  );

  const finished: number[] = [];
  await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      pool.verifyBaseProof(signed, publicKey).then((result) => {
        assert.equal(result.ok, true);
        finished.push(i);
      }),
    ),
  );
  assert.deepEqual(
    finished,
    Array.from({ length: 12 }, (_, i) => i),
  );
});
