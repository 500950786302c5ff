import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byGroupMetrics, computeTrajectoryMetrics, dictMean, prefixMetrics } from '../../rl/metrics';
import { makeTrajectoryGroup } from '../../rl/groups';
import type { TrajectoryGroup } from '../../rl/types';
import { groupOfRewards, tr, traj } from './build';

test('dictMean averages each key over the dicts that have it', () => {
  assert.deepEqual(dictMean([{ a: 1, b: 2 }, { a: 3 }, {}]), { a: 2, b: 2 });
  assert.deepEqual(dictMean([]), {});
});

test('by_group fractions: mixed, all good (>= 0.5), all bad', () => {
  const m = byGroupMetrics([groupOfRewards([0, 1]), groupOfRewards([0.5, 0.5]), groupOfRewards([0.2, 0.2]), groupOfRewards([-1, -1])]);
  assert.deepEqual(m, { 'by_group/frac_mixed': 0.25, 'by_group/frac_all_good': 0.25, 'by_group/frac_all_bad': 0.5 });
  assert.deepEqual(byGroupMetrics([]), { 'by_group/frac_mixed': 0, 'by_group/frac_all_good': 0, 'by_group/frac_all_bad': 0 });
});

// Two groups of two rollouts. Group A: a two-turn episode with reward 1 on its last turn and an
// empty (failed) rollout. Group B: two one-turn episodes, rewards 1 and 1.
function batch(): TrajectoryGroup[] {
  const a = makeTrajectoryGroup(
    [
      traj(
        tr([1, 2, 3], [4, 5], [-1, -1], 0, { 'reward/not_null': 0 }),
        tr([1, 2, 3, 4, 5, 6], [7], [-1], 1, { 'reward/final_step': 1, 'reward/not_null': 1 }),
      ),
      traj(),
    ],
    ['succeeded', 'failed'],
  );
  const b = makeTrajectoryGroup(
    [
      traj(tr([1], [2, 3, 4], [-1, -1, -1], 1, { 'reward/final_step': 1, 'reward/not_null': 1 })),
      traj(tr([1], [5], [-1], 1, { 'reward/final_step': 1, 'reward/not_null': 1 })),
    ],
    ['succeeded', 'succeeded'],
  );
  return [a, b];
}

test('env/all metrics on a worked batch', () => {
  assert.deepEqual(computeTrajectoryMetrics(batch()), {
    'env/all/ac_tokens_per_turn': 7 / 4, // 2 + 1 + 3 + 1 over 4 turns
    'env/all/ob_tokens_per_turn': 11 / 4, // 3 + 6 + 1 + 1
    'env/all/turns_per_episode': 1, // 4 turns, 4 episodes
    'env/all/total_episodes': 4,
    'env/all/total_turns': 4,
    'env/all/total_ac_tokens': 7,
    'env/all/total_ob_tokens': 11,
    'env/all/reward/total': 0.75, // returns 1, 0, 1, 1
    'env/all/reward/not_null': 0.75, // 0, 1, 1, 1
    'env/all/reward/final_step': 1,
    'env/all/by_group/frac_empty_traj': 0.25, // groups: 0.5 and 0
    'env/all/by_group/frac_status_succeeded': 0.75,
    'env/all/by_group/frac_status_failed': 0.25,
    'env/all/by_group/frac_status_cancelled': 0,
    'env/all/by_group/frac_status_others': 0,
    'env/all/by_group/frac_mixed': 0.5,
    'env/all/by_group/frac_all_good': 0.5,
    'env/all/by_group/frac_all_bad': 0,
  });
});

test('env/<tag> metrics appear only for tags covering a strict subset', () => {
  const groups = batch();
  const same = computeTrajectoryMetrics(groups, [['math'], ['math']]);
  assert.ok(!Object.keys(same).some((k) => k.startsWith('env/math/')));
  const split = computeTrajectoryMetrics(groups, [['hard'], ['easy']]);
  assert.equal(split['env/hard/total_episodes'], 2);
  assert.equal(split['env/hard/reward/total'], 0.5);
  assert.equal(split['env/easy/reward/total'], 1);
  assert.equal(split['env/all/total_episodes'], 4);
});

test('an all-empty batch gives zeros, not NaN or a crash', () => {
  const m = computeTrajectoryMetrics([makeTrajectoryGroup([traj(), traj()], ['failed', 'running'])]);
  assert.equal(m['env/all/ac_tokens_per_turn'], 0);
  assert.equal(m['env/all/turns_per_episode'], 0);
  assert.equal(m['env/all/reward/total'], 0);
  assert.equal(m['env/all/by_group/frac_empty_traj'], 1);
  assert.equal(m['env/all/by_group/frac_status_others'], 0.5);
  assert.equal(m['env/all/by_group/frac_all_bad'], 1);
  assert.ok(Object.values(m).every(Number.isFinite));
});

test('prefixMetrics', () => {
  assert.deepEqual(prefixMetrics('test/', { 'env/all/reward/total': 0.5, x: 1 }), { 'test/env/all/reward/total': 0.5, 'test/x': 1 });
});
