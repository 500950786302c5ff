import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oldestServedStep, servedStalenessMetrics } from '../../rl/served-staleness';

test('a group is as stale as its stalest turn; labels that disagree with the spans are counted', () => {
  assert.equal(oldestServedStep([3, 2, 4, undefined, 'x', -1, 2.5]), 2);
  assert.equal(oldestServedStep([undefined]), null);
  const { metrics, mislabelled } = servedStalenessMetrics(5, [
    { served: 4, label: 4 },
    { served: 3, label: 4 }, // started as 4, but a turn was served by 3
    { served: null, label: 5 },
  ]);
  assert.deepEqual(metrics, {
    'async/groups_mislabelled': 1,
    'async/groups_served_unknown': 1,
    'async/staleness_mean': 1.5,
    'async/staleness_max': 2,
    'async/staleness_min': 1,
  });
  assert.deepEqual(mislabelled, ['group 1: labelled 4, served by 3']);
});

test('given the bound, the groups served from further behind than it are counted', () => {
  const groups = [{ served: 1 }, { served: 3 }, { served: 4 }, { served: null }];
  assert.equal(servedStalenessMetrics(5, groups, 1).metrics['async/groups_past_bound'], 2, 'staleness 4 and 2 exceed 1');
  assert.equal(servedStalenessMetrics(5, groups, 4).metrics['async/groups_past_bound'], 0);
  assert.equal(servedStalenessMetrics(5, groups).metrics['async/groups_past_bound'], undefined, 'no bound, no count');
});
