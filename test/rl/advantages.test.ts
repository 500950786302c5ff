import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeAdvantages, totalRewards } from '../../rl/advantages';
import { groupOfRewards, tr, traj } from './build';

test('advantages are centred on the group mean, without std division', () => {
  assert.deepEqual(computeAdvantages([groupOfRewards([1, 0, 0, 1]), groupOfRewards([3, 0, 0, 1])]), [
    [0.5, -0.5, -0.5, 0.5],
    [2, -1, -1, 0],
  ]);
});

test('a group of one gets advantage 0; a constant group gets all zeros', () => {
  assert.deepEqual(computeAdvantages([groupOfRewards([0.7]), groupOfRewards([1, 1, 1])]), [[0], [0, 0, 0]]);
});

test('total reward sums step rewards and the group final reward', () => {
  const group = {
    trajectories: [traj(tr([1], [2], [-1], 0.25), tr([1, 2], [3], [-1], 0.5)), traj()],
    finalRewards: [0.25, 1],
    metrics: [],
  };
  assert.deepEqual(totalRewards(group), [1, 1]);
  assert.deepEqual(computeAdvantages([group]), [[0, 0]]);
});
