import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aglGroupMetrics, makeTrajectoryGroup } from '../../rl/groups';
import { tr, traj } from './build';

test('makeTrajectoryGroup: zero final rewards, G empty dicts plus the AGL dict', () => {
  const full = traj(tr([1], [2], [-1], 1));
  const g = makeTrajectoryGroup([full, traj(), full, traj()], ['succeeded', 'failed', 'cancelled', 'preparing']);
  assert.deepEqual(g.finalRewards, [0, 0, 0, 0]);
  assert.equal(g.metrics.length, 5);
  assert.deepEqual(g.metrics.slice(0, 4), [{}, {}, {}, {}]);
  assert.deepEqual(g.metrics[4], {
    'by_group/frac_empty_traj': 0.5,
    'by_group/frac_status_succeeded': 0.25,
    'by_group/frac_status_failed': 0.25,
    'by_group/frac_status_cancelled': 0.25,
    'by_group/frac_status_others': 0.25,
  });
  assert.throws(() => makeTrajectoryGroup([full], []), /1 trajectories but 0 statuses/);
});

test('aglGroupMetrics of an empty group is all zeros', () => {
  assert.deepEqual(Object.values(aglGroupMetrics([], [])), [0, 0, 0, 0, 0]);
});
