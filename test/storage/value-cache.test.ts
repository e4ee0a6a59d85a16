import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createValueCache } from '../../src/storage/value-cache.ts';

test('the value cache hands out copies, keeps the most recently used, and stays within its bytes', () => {
  const cache = createValueCache(100);
  cache.set('a', { n: 1 }, 40);
  cache.set('b', { n: 2 }, 40);
  const copy = cache.get('a') as { n: number };
  copy.n = 99;
  assert.deepEqual(cache.get('a'), { n: 1 }, 'a caller changing its copy changes nothing cached');
  cache.set('c', { n: 3 }, 40); // over 100 bytes: the least recently used (b) goes
  assert.equal(cache.get('b'), undefined);
  assert.deepEqual(cache.get('a'), { n: 1 });
  assert.deepEqual(cache.get('c'), { n: 3 });
  cache.set('huge', { n: 4 }, 500);
  assert.equal(cache.get('huge'), undefined, 'a value larger than the cache is not kept');
  const off = createValueCache(0);
  off.set('a', { n: 1 }, 1);
  assert.equal(off.get('a'), undefined, 'BLOCK_CACHE_MB=0 keeps nothing');
});
