import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reconstructTransitions } from '../../rl/transitions';
import type { Triplet } from '../../rl/adapters/types';

const lp = (...xs: number[]) => xs.map((logprob) => ({ token: 'x', bytes: null, logprob, top_logprobs: [] }));

test('reconstructTransitions keeps tokenised calls in order and marks the last one', () => {
  const triplets: Triplet[] = [
    { prompt: { token_ids: [1, 2, 3] }, response: { token_ids: [4, 5], logprobs: lp(-0.1, -0.2) }, reward: null, metadata: {} },
    { prompt: { token_ids: [] }, response: { token_ids: [6], logprobs: lp(-1) }, reward: null, metadata: {} },
    { prompt: {}, response: { token_ids: [6] }, reward: 0.5, metadata: {} },
    { prompt: { token_ids: [1, 2, 3, 4, 5, 6] }, response: { token_ids: [7], logprobs: lp(-0.3) }, reward: 1, metadata: {} },
  ];
  const { trajectory, notes } = reconstructTransitions(triplets);
  assert.deepEqual(trajectory, {
    transitions: [
      { ob: [1, 2, 3], acTokens: [4, 5], acLogprobs: [-0.1, -0.2], reward: 0, episodeDone: false, metrics: { 'reward/not_null': 0 } },
      {
        ob: [1, 2, 3, 4, 5, 6], acTokens: [7], acLogprobs: [-0.3], reward: 1, episodeDone: true,
        metrics: { 'reward/final_step': 1, 'reward/not_null': 1 },
      },
    ],
    finalOb: [],
  });
  assert.deepEqual(notes, { skippedNoTokenIds: 1, skippedEmptyTokenIds: 1, missingLogprobs: 0, logprobCountMismatch: 0 });
});

test('reconstructTransitions sets logprobs to null when missing or miscounted', () => {
  const { trajectory, notes } = reconstructTransitions([
    { prompt: { token_ids: [1] }, response: { token_ids: [2, 3] }, reward: null, metadata: {} },
    { prompt: { token_ids: [1] }, response: { token_ids: [2, 3], logprobs: lp(-1) }, reward: 0, metadata: {} },
  ]);
  assert.deepEqual(trajectory.transitions.map((t) => t.acLogprobs), [null, null]);
  assert.equal(notes.missingLogprobs, 1);
  assert.equal(notes.logprobCountMismatch, 1);
  // A zero reward on the last call is still a reward: final_step is reported.
  assert.deepEqual(trajectory.transitions[1]!.metrics, { 'reward/final_step': 0, 'reward/not_null': 1 });
});

test('reconstructTransitions: when the last triplet is skipped nothing is marked done (as the reference)', () => {
  const { trajectory } = reconstructTransitions([
    { prompt: { token_ids: [1] }, response: { token_ids: [2], logprobs: lp(-1) }, reward: 0.5, metadata: {} },
    { prompt: { token_ids: [1, 2, 9] }, response: { token_ids: [] }, reward: null, metadata: {} },
  ]);
  assert.equal(trajectory.transitions.length, 1);
  assert.equal(trajectory.transitions[0]!.episodeDone, false);
  assert.equal(trajectory.transitions[0]!.reward, 0.5);
  assert.deepEqual(trajectory.transitions[0]!.metrics, { 'reward/not_null': 1 });
});

test('reconstructTransitions of no triplets is an empty trajectory', () => {
  assert.deepEqual(reconstructTransitions([]).trajectory, { transitions: [], finalOb: [] });
});
