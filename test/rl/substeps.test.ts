import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitIntoSubsteps, splitList } from '../../rl/substeps';

// Expected edges from numpy: np.linspace(0, n, k + 1).astype(int). The cookbook's docstring
// examples ([[1, 2, 3], [4, 5]]) do not match what its code returns; these do.
test('splitList follows numpy linspace edges', () => {
  assert.deepEqual(splitList([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4, 5]]);
  assert.deepEqual(splitList([1, 2, 3, 4, 5], 3), [[1], [2, 3], [4, 5]]);
  const sizes = (n: number, k: number) => splitList(Array.from({ length: n }, (_, i) => i), k).map((c) => c.length);
  assert.deepEqual(sizes(10, 3), [3, 3, 4]); // edges 0 3 6 10
  assert.deepEqual(sizes(49, 3), [16, 16, 17]); // edges 0 16 32 49
  assert.deepEqual(sizes(100, 7), [14, 14, 14, 15, 14, 14, 15]); // 0 14 28 42 57 71 85 100
  assert.deepEqual(sizes(33, 9), [3, 4, 4, 3, 4, 4, 3, 4, 4]); // 0 3 7 11 14 18 22 25 29 33
  assert.throws(() => splitList([1], 2), /cannot split/);
  assert.throws(() => splitList([1], 0), /positive/);
});

test('splitIntoSubsteps uses min(numSubsteps, len) chunks and nothing for an empty batch', () => {
  assert.deepEqual(splitIntoSubsteps(['a', 'b', 'c'], 1), [['a', 'b', 'c']]);
  assert.deepEqual(splitIntoSubsteps(['a', 'b', 'c'], 8), [['a'], ['b'], ['c']]);
  assert.deepEqual(splitIntoSubsteps(['a', 'b', 'c', 'd'], 2), [['a', 'b'], ['c', 'd']]);
  assert.deepEqual(splitIntoSubsteps([], 4), []);
  assert.throws(() => splitIntoSubsteps(['a'], 0), /positive/);
});
