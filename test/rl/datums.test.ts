import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actionMask, assembleTrainingData, fullSequence, removeMask, trajectoryToData } from '../../rl/datums';
import { tr, traj } from './build';

test('multi-turn prefix merging and the one-token shift (tinker-protocol §B.5 worked example)', () => {
  const data = trajectoryToData(traj(tr([1, 2, 3], [4, 5], [-0.1, -0.2]), tr([1, 2, 3, 4, 5, 6], [7], [-0.3])), 0.5);
  assert.deepEqual(data, [
    {
      modelInput: [1, 2, 3, 4, 5, 6],
      lossFnInputs: {
        target_tokens: [2, 3, 4, 5, 6, 7],
        logprobs: [0, 0, -0.1, -0.2, 0, -0.3],
        advantages: [0, 0, 0.5, 0.5, 0, 0.5],
        mask: [0, 0, 1, 1, 0, 1],
      },
    },
  ]);
});

test('an observation that does not extend the sequence starts a new datum', () => {
  const data = trajectoryToData(traj(tr([1, 2], [3], [-0.5]), tr([9, 8], [7], [-0.25]), tr([9, 8, 7, 6], [5, 4], [-1, -2])), -1);
  assert.deepEqual(data, [
    { modelInput: [1, 2], lossFnInputs: { target_tokens: [2, 3], logprobs: [0, -0.5], advantages: [0, -1], mask: [0, 1] } },
    {
      modelInput: [9, 8, 7, 6, 5],
      lossFnInputs: {
        target_tokens: [8, 7, 6, 5, 4],
        logprobs: [0, -0.25, 0, -1, -2],
        advantages: [0, -1, 0, -1, -1],
        mask: [0, 1, 0, 1, 1],
      },
    },
  ]);
});

test('a transition without logprobs is left out; its tokens come back as context', () => {
  const data = trajectoryToData(traj(tr([1, 2], [3], null), tr([1, 2, 3, 4], [5], [-0.4])), 2);
  assert.deepEqual(data, [
    {
      modelInput: [1, 2, 3, 4],
      lossFnInputs: { target_tokens: [2, 3, 4, 5], logprobs: [0, 0, 0, -0.4], advantages: [0, 0, 0, 2], mask: [0, 0, 0, 1] },
    },
  ]);
  assert.deepEqual(trajectoryToData(traj(tr([1, 2], [3], null)), 1), []);
  assert.deepEqual(trajectoryToData(traj(), 1), []);
});

test('assembleTrainingData walks groups then trajectories and counts dropped transitions', () => {
  const groups = [
    {
      trajectories: [traj(tr([1], [2], [-1]), tr([5], [6], [-1])), traj(tr([1], [3], null))],
      finalRewards: [0, 0],
      metrics: [],
    },
    { trajectories: [traj(tr([7], [8], [-2]))], finalRewards: [0], metrics: [] },
  ];
  const out = assembleTrainingData(groups, [[0.5, -0.5], [0]]);
  assert.deepEqual(out.origins, [
    { groupIdx: 0, trajIdx: 0 },
    { groupIdx: 0, trajIdx: 0 },
    { groupIdx: 1, trajIdx: 0 },
  ]);
  assert.deepEqual(out.data.map((d) => d.lossFnInputs.advantages), [[0.5], [0.5], [0]]);
  assert.deepEqual(out.metrics, { 'train/dropped_missing_logprobs': 1 });
  assert.throws(() => assembleTrainingData(groups, [[0.5, -0.5]]), /2 groups but 1/);
});

test('removeMask strips only the mask; fullSequence undoes the shift', () => {
  const [d] = trajectoryToData(traj(tr([1, 2], [3, 4], [-1, -2])), 1);
  assert.deepEqual(removeMask(d!), {
    modelInput: [1, 2, 3],
    lossFnInputs: { target_tokens: [2, 3, 4], logprobs: [0, -1, -2], advantages: [0, 1, 1] },
  });
  assert.deepEqual(fullSequence(d!), [1, 2, 3, 4]);
  assert.deepEqual(actionMask(d!), [0, 1, 1]);
  assert.throws(() => actionMask(removeMask(d!)), /no mask/);
});
