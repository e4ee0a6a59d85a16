import assert from 'node:assert/strict';
import { test } from 'node:test';
import { balancedOrder, pairedRatio } from '../../bench/telemetry.ts';

/** How often each variant came right after each other one, over `turns` turns. */
function followers(n: number, turns: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let turn = 0; turn < turns; turn++) {
    const order = balancedOrder(n, turn);
    assert.deepEqual(
      [...order].sort(),
      Array.from({ length: n }, (_, i) => i),
      `turn ${turn} runs each variant once`,
    );
    for (let i = 1; i < n; i++) {
      const pair = `${order[i - 1]}→${order[i]}`;
      counts.set(pair, (counts.get(pair) ?? 0) + 1);
    }
  }
  return counts;
}

test("the telemetry bench's turns put every variant right after every other one equally often", () => {
  // Four variants, as the bench has: 12 ordered pairs, each once in four turns.
  const four = followers(4, 4);
  assert.equal(four.size, 12);
  assert.ok(
    [...four.values()].every((count) => count === 1),
    JSON.stringify([...four]),
  );
  // An odd count needs the square and its mirror.
  const three = followers(3, 6);
  assert.equal(three.size, 6);
  assert.ok(
    [...three.values()].every((count) => count === 2),
    JSON.stringify([...three]),
  );
  // Each variant leads one turn in n.
  assert.deepEqual([0, 1, 2, 3].map((turn) => balancedOrder(4, turn)[0]).sort(), [0, 1, 2, 3]);
});

test('a paired ratio compares each turn with its own baseline, so drift between turns cancels', () => {
  // The machine slows down turn after turn; the variant costs 4 % more in each turn.
  const baseline = [1, 1.2, 1.5, 2, 2.6];
  const variant = baseline.map((value) => value * 1.04);
  assert.ok(Math.abs(pairedRatio(variant, baseline) - 1.04) < 1e-9);
});
