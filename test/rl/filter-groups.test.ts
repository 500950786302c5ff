import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allSame, removeConstantRewardGroups } from '../../rl/filter-groups';
import { groupOfRewards } from './build';

test('constant-reward groups are removed, compared with exact equality', () => {
  const mixed = groupOfRewards([0, 1]);
  const almost = groupOfRewards([0.1 + 0.2, 0.3]); // 0.30000000000000004 !== 0.3
  const out = removeConstantRewardGroups([groupOfRewards([1, 1]), mixed, groupOfRewards([0.3, 0.3]), almost]);
  assert.equal(out.length, 2);
  assert.equal(out[0], mixed);
  assert.equal(out[1], almost);
});

test('when every group is constant the first one is kept', () => {
  const first = groupOfRewards([0, 0]);
  const out = removeConstantRewardGroups([first, groupOfRewards([1, 1, 1])]);
  assert.deepEqual(out, [first]);
  assert.equal(out[0], first);
  assert.deepEqual(removeConstantRewardGroups([]), []);
});

test('allSame', () => {
  assert.equal(allSame([]), true);
  assert.equal(allSame([2, 2]), true);
  assert.equal(allSame([2, 2.0000001]), false);
});
