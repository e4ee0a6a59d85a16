import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  checkOneTimeCode,
  hashOneTimeCode,
  newOneTimeCode,
  ONE_TIME_CODE_MAX_ATTEMPTS,
  ONE_TIME_CODE_TTL_MS,
  type OneTimeCodeState,
} from '../../src/interaction/one-time-code.ts';

const NOW = new Date('2026-05-01T12:00:00.000Z');
const KEY = new Uint8Array(32).fill(9);
const BINDING = { interactionId: 'int-1', key: KEY };

function issued(
  code: string,
  binding: { interactionId: string; key?: Uint8Array } = BINDING,
): OneTimeCodeState {
  return {
    hash: hashOneTimeCode(code, binding.interactionId, binding.key),
    expiresAt: new Date(NOW.getTime() + ONE_TIME_CODE_TTL_MS),
    attempts: 0,
  };
}

test('the limits are the ones the design promises', () => {
  assert.equal(ONE_TIME_CODE_MAX_ATTEMPTS, 5);
  assert.equal(ONE_TIME_CODE_TTL_MS, 600_000);
});

test('codes are six digits, every digit uniform in every position, leading zeros included', () => {
  const draws = 20_000;
  const counts = Array.from({ length: 6 }, () => new Array(10).fill(0));
  const seen = new Set<string>();
  for (let i = 0; i < draws; i++) {
    const code = newOneTimeCode();
    assert.match(code, /^\d{6}$/);
    seen.add(code);
    for (let position = 0; position < 6; position++) counts[position]![Number(code[position])]++;
  }
  // Expected 2,000 per cell, standard deviation about 42: these bounds are ±9.5 σ.
  for (const row of counts) for (const count of row) assert.ok(count > 1600 && count < 2400, `${count}`);
  // 20,000 draws from 10⁶ give about 200 repeats; a weak generator would give far more.
  assert.ok(seen.size > 19_500, `${seen.size} distinct codes`);
});

test('the hash binds the code to its interaction and key', () => {
  const hash = hashOneTimeCode('123456', 'int-1', KEY);
  assert.equal(hashOneTimeCode('123456', 'int-1', KEY), hash);
  assert.notEqual(hashOneTimeCode('123456', 'int-2', KEY), hash);
  assert.notEqual(hashOneTimeCode('123457', 'int-1', KEY), hash);
  assert.notEqual(hashOneTimeCode('123456', 'int-1', new Uint8Array(32).fill(1)), hash);
  assert.notEqual(hashOneTimeCode('123456', 'int-1'), hash);
  assert.ok(!hash.includes('123456'));
});

test('the right code passes, also pasted with spaces or a dash', () => {
  const state = issued('042137');
  assert.deepEqual(checkOneTimeCode(state, '042137', NOW, BINDING), { ok: true });
  assert.deepEqual(checkOneTimeCode(state, ' 042 137 ', NOW, BINDING), { ok: true });
  assert.deepEqual(checkOneTimeCode(state, '042-137', NOW, BINDING), { ok: true });
});

test('an unkeyed hash works the same way', () => {
  const binding = { interactionId: 'int-1' };
  const state = issued('555000', binding);
  assert.deepEqual(checkOneTimeCode(state, '555000', NOW, binding), { ok: true });
  assert.equal(checkOneTimeCode(state, '555001', NOW, binding).ok, false);
});

test('a wrong code counts down the attempts', () => {
  assert.deepEqual(checkOneTimeCode(issued('111111'), '111112', NOW, BINDING), {
    ok: false,
    reason: 'wrong',
    attemptsLeft: 4,
  });
  assert.deepEqual(checkOneTimeCode(issued('111111'), '11111', NOW, BINDING), {
    ok: false,
    reason: 'wrong',
    attemptsLeft: 4,
  });
});

test('the code of another interaction, or checked under another key, is wrong', () => {
  const state = issued('777777');
  assert.equal(checkOneTimeCode(state, '777777', NOW, { interactionId: 'int-2', key: KEY }).ok, false);
  assert.equal(checkOneTimeCode(state, '777777', NOW, { interactionId: 'int-1' }).ok, false);
});

test('after five wrong tries even the right code is refused as locked', () => {
  const state = issued('246810');
  const answers = [];
  for (let i = 0; i < ONE_TIME_CODE_MAX_ATTEMPTS; i++) {
    const answer = checkOneTimeCode(state, '000000', NOW, BINDING);
    answers.push(answer);
    if (!answer.ok && answer.reason === 'wrong') state.attempts++;
  }
  assert.deepEqual(
    answers.map((a) => (a.ok ? 'ok' : `${a.reason}:${a.attemptsLeft}`)),
    ['wrong:4', 'wrong:3', 'wrong:2', 'wrong:1', 'wrong:0'],
  );
  assert.deepEqual(checkOneTimeCode(state, '246810', NOW, BINDING), {
    ok: false,
    reason: 'locked',
    attemptsLeft: 0,
  });
  assert.deepEqual(checkOneTimeCode({ ...state, attempts: 4 }, '246810', NOW, BINDING), { ok: true });
});

test('a code is valid for ten minutes and not a moment longer', () => {
  const state = issued('135790');
  const justBefore = new Date(state.expiresAt.getTime() - 1);
  assert.deepEqual(checkOneTimeCode(state, '135790', justBefore, BINDING), { ok: true });
  assert.deepEqual(checkOneTimeCode(state, '135790', state.expiresAt, BINDING), {
    ok: false,
    reason: 'expired',
    attemptsLeft: 5,
  });
});

test('a damaged stored hash is a wrong code, not a crash', () => {
  const state = { ...issued('135790'), hash: 'short' };
  assert.deepEqual(checkOneTimeCode(state, '135790', NOW, BINDING), {
    ok: false,
    reason: 'wrong',
    attemptsLeft: 4,
  });
});
