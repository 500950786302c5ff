import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareTrainingBatch } from '../../rl/prepare-batch';
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

test('a group whose advantages would overflow float32 (a reward of 1e308) is left out and counted; the rest trains', () => {
  // mean 2.5e307: advantages ±7.5e307, finite as float64, ±Infinity as the float32 the trainer receives.
  const out = prepareTrainingBatch([groupOfRewards([1e308, 0, 0, 0]), groupOfRewards([1, 0])]);
  assert.equal(out.skip, false);
  if (out.skip) return;
  assert.equal(out.metrics['train/dropped_groups_unsendable_advantages'], 1);
  assert.deepEqual(out.data.map((d) => d.lossFnInputs.advantages), [[0, 0.5], [0, -0.5]]);
  assert.deepEqual(out.origins.map((o) => [o.groupIdx, o.trajIdx]), [[1, 0], [1, 1]], 'origins keep the batch positions');
  for (const d of out.data) for (const xs of Object.values(d.lossFnInputs)) for (const x of xs ?? []) assert.ok(Number.isFinite(Math.fround(x)));
});

test('any finite reward gives datums whose every number survives float32, or a skip', () => {
  for (const big of [3.5e38, -1e300, 1e308, Number.MAX_VALUE, -Number.MAX_VALUE]) {
    const out = prepareTrainingBatch([groupOfRewards([big, 0]), groupOfRewards([big, -big])]);
    if (out.skip) {
      assert.match(out.reason, /float32/);
      continue;
    }
    for (const d of out.data) for (const xs of Object.values(d.lossFnInputs)) for (const x of xs ?? []) assert.ok(Number.isFinite(Math.fround(x)), `${big}: ${x}`);
  }
});

test('a skipped batch names its own cause: float32 only when every kept group overflowed', () => {
  const reasonOf = (out: ReturnType<typeof prepareTrainingBatch>) => (out.skip ? out.reason : 'not skipped');
  // Every group overflows: nothing is left to send, and that is the cause.
  assert.match(reasonOf(prepareTrainingBatch([groupOfRewards([1e308, 0, 0, 0])])), /float32/);
  // One group overflows, the other has no tokens: the batch is empty because of the empty one.
  const empty = makeTrajectoryGroup([traj(), traj()], ['failed', 'failed']);
  assert.match(reasonOf(prepareTrainingBatch([groupOfRewards([1e308, 0, 0, 0]), empty])), /every trajectory is empty/);
  // No group at all: nothing overflowed either.
  assert.match(reasonOf(prepareTrainingBatch([])), /every trajectory is empty/);
});
