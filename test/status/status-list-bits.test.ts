import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import {
  bitstringBitOf,
  drawFreeIndex,
  emptyBitstring,
  emptyTokenList,
  LIST_SIZE,
  setBitstringBit,
  setTokenStatus,
  TOKEN_STATUS,
  tokenStatusOf,
} from '../../src/status/status-list-bits.ts';

/**
 * The byte layout of both kinds of list, against the examples in the specifications' own text,
 * and the random index draw.
 */

describe('Token Status List bytes (draft-ietf-oauth-status-list, "Compressed Byte Array")', () => {
  test("the draft's 1-bit example: 16 statuses are 0xB9 0xA3, index 0 the low bit", () => {
    const statuses = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1];
    const bytes = emptyTokenList(1, 16);
    for (const [index, status] of statuses.entries()) setTokenStatus(bytes, 1, index, status);
    assert.deepEqual([...bytes], [0xb9, 0xa3]);
    assert.equal(deflateSync(bytes, { level: 9 }).toString('hex'), '78dadbb918000217015d');
    assert.deepEqual(
      statuses.map((_, index) => tokenStatusOf(bytes, 1, index)),
      statuses,
    );
  });

  test("the draft's 2-bit example: 12 statuses are 0xC9 0x44 0xF9; setting again overwrites", () => {
    const statuses = [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3];
    const bytes = emptyTokenList(2, 12);
    for (const index of statuses.keys()) setTokenStatus(bytes, 2, index, 3);
    for (const [index, status] of statuses.entries()) setTokenStatus(bytes, 2, index, status);
    assert.deepEqual([...bytes], [0xc9, 0x44, 0xf9]);
    assert.equal(tokenStatusOf(bytes, 2, 1), TOKEN_STATUS.SUSPENDED);
    setTokenStatus(bytes, 2, 1, TOKEN_STATUS.VALID);
    assert.equal(tokenStatusOf(bytes, 2, 1), TOKEN_STATUS.VALID);
    assert.equal(bytes[0], 0xc1, 'only index 1 changed');
  });

  test('a list has LIST_SIZE entries by default; indexes and statuses out of range are refused', () => {
    assert.equal(emptyTokenList(2).length, (LIST_SIZE * 2) / 8);
    assert.equal(emptyBitstring().length, 16 * 1024);
    const bytes = emptyTokenList(2, 8);
    assert.throws(() => setTokenStatus(bytes, 2, 8, 1), RangeError);
    assert.throws(() => setTokenStatus(bytes, 2, -1, 1), RangeError);
    assert.throws(() => setTokenStatus(bytes, 2, 0, 4), RangeError);
    assert.throws(() => tokenStatusOf(bytes, 2, 1.5), RangeError);
  });
});

describe('Bitstring Status List bytes (W3C)', () => {
  test('index 0 is the most significant bit of byte 0', () => {
    const bytes = emptyBitstring(16);
    setBitstringBit(bytes, 0, true);
    setBitstringBit(bytes, 9, true);
    assert.deepEqual([...bytes], [0x80, 0x40]);
    assert.equal(bitstringBitOf(bytes, 9), true);
    assert.equal(bitstringBitOf(bytes, 8), false);
    setBitstringBit(bytes, 0, false);
    assert.deepEqual([...bytes], [0x00, 0x40]);
  });
});

describe('drawFreeIndex', () => {
  test('1000 draws are distinct, below the size and not in issuance order', () => {
    const taken = new Set<number>();
    const drawn: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const index = drawFreeIndex(taken)!;
      taken.add(index);
      drawn.push(index);
    }
    assert.equal(new Set(drawn).size, 1000);
    assert.ok(drawn.every((index) => Number.isInteger(index) && index >= 0 && index < LIST_SIZE));
    const rising = drawn.filter((index, i) => i > 0 && index > drawn[i - 1]!).length;
    // Random order rises about half the time; a counter would rise every time.
    assert.ok(rising > 400 && rising < 600, `${rising} of 999 steps rise`);
    assert.ok(Math.max(...drawn) > LIST_SIZE / 2, 'draws spread over the whole list');
  });

  test('a crowded list still yields its last free index; a full one yields null', () => {
    const size = 1024;
    const taken = (index: number) => index !== 777;
    assert.equal(drawFreeIndex(taken, size), 777);
    assert.equal(
      drawFreeIndex(() => true, size),
      null,
    );
  });
});
