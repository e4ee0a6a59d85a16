import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLru } from '../src/lru.ts';

describe('bounded least-recently-used map', () => {
  it('keeps the most recently used entries and releases each one it pushes out, once', () => {
    const released: string[] = [];
    const lru = createLru<string, string>(2, (value) => released.push(value));
    lru.set('a', 'A');
    lru.set('b', 'B');
    assert.equal(lru.get('a'), 'A'); // a is now newer than b
    lru.set('c', 'C');
    assert.deepEqual(released, ['B']);
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.get('a'), 'A');
    assert.equal(lru.get('c'), 'C');
    lru.set('c', 'C2'); // a replaced value is released, and nothing else is pushed out
    assert.deepEqual(released, ['B', 'C']);
    assert.equal(lru.get('c'), 'C2');
  });
});
