// mapConcurrent (common/concurrent-map.ts): results in input order, never more than `limit` in flight, and the
// first failure rejects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapConcurrent } from '../../common/concurrent-map';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('in order, bounded, concurrent', async () => {
  let inFlight = 0;
  let most = 0;
  const items = Array.from({ length: 40 }, (_, i) => i);
  const started = Date.now();
  const out = await mapConcurrent(items, 8, async (x) => {
    most = Math.max(most, ++inFlight);
    await sleep(20 + ((x * 7) % 5) * 5); // finishing out of order
    inFlight--;
    return x * 2;
  });
  assert.deepEqual(out, items.map((x) => x * 2));
  assert.equal(most, 8, 'exactly the bound in flight');
  assert.ok(Date.now() - started < 40 * 20, 'not one at a time');
  assert.deepEqual(await mapConcurrent([], 4, async () => 1), []);
});

test('the first failure rejects; a bad limit is refused', async () => {
  await assert.rejects(mapConcurrent([1, 2, 3], 2, async (x) => { if (x === 2) throw new Error('two'); return x; }), /two/);
  await assert.rejects(mapConcurrent([1], 0, async (x) => x), /limit must be a positive integer, got 0/);
});
