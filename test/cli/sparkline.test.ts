// The reward sparkline of the progress line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressLine, RewardHistory, sparkline } from '../../cli/progress-format';
import type { Progress } from '../../shared/run-types';

test('rewards within 0..1 on a fixed scale, others on their own range, gaps as spaces', () => {
  assert.equal(sparkline([0, 0.5, 1]), '▁▅█');
  assert.equal(sparkline([0.9, 0.9]), '▇▇', 'a flat high reward reads high');
  assert.equal(sparkline([-2, 0, 2]), '▁▅█');
  assert.equal(sparkline([0, null, 1]), '▁ █');
  assert.equal(sparkline([]), '');
  assert.equal(sparkline(Array.from({ length: 40 }, (_, i) => (i < 20 ? 0 : 1)), 24).length, 24, 'the last 24 only');
});

const p = (batch: number, reward: number): Progress => ({
  runName: 'hello',
  batch,
  numBatches: 20,
  phase: 'training',
  paused: false,
  stopRequested: false,
  lastMetrics: { 'progress/batch': batch - 1, 'env/all/reward/total': reward },
  policyStep: batch,
  startedAtMs: 0,
  batchStartedAtMs: 10_000,
  secondsPerBatch: 4,
  changes: {},
});

test('a watcher gathers one reward per step, whatever how often it polls, and the line shows them', () => {
  const h = new RewardHistory();
  for (const [b, r] of [[1, 0], [1, 0], [2, 0.5], [4, 1]] as const) h.observe(p(b, r));
  assert.deepEqual(h.values(), [0, 0.5, null, 1], 'a step it never saw is a gap');
  assert.equal(progressLine(p(4, 1), 13_000, h.values()), 'hello | batch 4/20 | training | reward 1.000 ▁▅ █ | 4.0 s/batch | this batch 3 s');
  assert.equal(progressLine(p(4, 1), 13_000, [1]), 'hello | batch 4/20 | training | reward 1.000 | 4.0 s/batch | this batch 3 s', 'one value: no sparkline');
});
