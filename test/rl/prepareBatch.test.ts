import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareTrainingBatch } from '../../rl/prepareBatch';
import { makeTrajectoryGroup } from '../../rl/groups';
import { groupOfRewards, tr, traj } from './build';

test('a normal batch yields datums, trajectory metrics and zero skip counters', () => {
  const out = prepareTrainingBatch([groupOfRewards([1, 0]), groupOfRewards([1, 1])]);
  assert.equal(out.skip, false);
  if (out.skip) return;
  assert.equal(out.data.length, 4);
  assert.deepEqual(out.data.map((d) => d.lossFnInputs.advantages), [[0, 0.5], [0, -0.5], [0, 0], [0, 0]]);
  assert.deepEqual(out.origins.map((o) => [o.groupIdx, o.trajIdx]), [[0, 0], [0, 1], [1, 0], [1, 1]]);
  assert.equal(out.metrics['env/all/reward/total'], 0.75);
  assert.equal(out.metrics['train/skipped_empty_batch'], 0);
  assert.equal(out.metrics['train/dropped_missing_logprobs'], 0);
});

test('removeConstantRewardGroups is applied before metrics when asked', () => {
  const out = prepareTrainingBatch([groupOfRewards([1, 1]), groupOfRewards([1, 0])], { removeConstantRewardGroups: true });
  assert.equal(out.skip, false);
  assert.equal(out.metrics['env/all/total_episodes'], 2);
  assert.equal(out.metrics['env/all/reward/total'], 0.5);
});

test('an all-empty batch says skip, with a metric, instead of crashing', () => {
  const out = prepareTrainingBatch([makeTrajectoryGroup([traj(), traj()], ['failed', 'failed'])]);
  assert.equal(out.skip, true);
  if (!out.skip) return;
  assert.match(out.reason, /empty/);
  assert.equal(out.metrics['train/skipped_empty_batch'], 1);
  assert.equal(out.metrics['env/all/by_group/frac_status_failed'], 1);
});

test('a batch where no transition has logprobs says skip and counts the drops', () => {
  const noLp = traj(tr([1, 2], [3], null, 1), tr([1, 2, 3, 4], [5], null));
  const out = prepareTrainingBatch([makeTrajectoryGroup([noLp, traj(tr([1], [2], null))], ['succeeded', 'succeeded'])]);
  assert.equal(out.skip, true);
  if (!out.skip) return;
  assert.match(out.reason, /logprobs/);
  assert.equal(out.metrics['train/dropped_missing_logprobs'], 3);
  assert.equal(out.metrics['train/skipped_empty_batch'], 1);
});
