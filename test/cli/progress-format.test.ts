// The one progress line `watch` and `status` print, for runs of this code and of older code (no `changes`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressLine } from '../../cli/progress-format';
import type { Progress } from '../../workflows/run-types';

const base: Progress = {
  runName: 'hello',
  batch: 4,
  numBatches: 20,
  phase: 'training',
  paused: false,
  stopRequested: false,
  lastMetrics: { 'env/all/reward/total': 0.5, 'test/env/all/reward/total': 0.25 },
  policyStep: 4,
  startedAtMs: 0,
  batchStartedAtMs: 10_000,
  secondsPerBatch: 4.25,
  changes: {},
};

test('a running batch: its number counted from 1, rewards, pace and time in the batch', () => {
  assert.equal(progressLine(base, 13_000), 'hello | batch 5/20 | training | reward 0.500 | eval 0.250 | 4.3 s/batch | this batch 3 s');
});

test('paused, configured and stopping are shown', () => {
  const p: Progress = { ...base, paused: true, stopRequested: true, changes: { learningRate: 0.001, evalEvery: 10 } };
  assert.equal(
    progressLine(p, 13_000),
    'hello | batch 5/20 | PAUSED | reward 0.500 | eval 0.250 | 4.3 s/batch | this batch 3 s | configured learningRate=0.001 evalEvery=10 | stopping after this batch',
  );
});

test('a run of older workflow code, without changes, and a finished one', () => {
  const { changes: _c, ...old } = base;
  assert.equal(progressLine({ ...(old as Progress), phase: 'done', batch: 20 }, 13_000), 'hello | batch 20/20 | done | reward 0.500 | eval 0.250 | 4.3 s/batch');
});

test('an async run counts steps and shows its groups and staleness', () => {
  const p: Progress = {
    ...base,
    phase: 'waiting for groups',
    lastMetrics: { ...base.lastMetrics, 'async/staleness_mean': 0.75, 'async/staleness_max': 2 },
    async: { maxStepsOffPolicy: 2, groupsPerBatch: 16, inFlight: 30, finished: 5, requeued: 0, started: 99, trained: 64, resampled: 1, droppedStale: 0, failed: 0 },
  };
  assert.equal(
    progressLine(p, 13_000),
    'hello | step 5/~20 | waiting for groups | reward 0.500 | eval 0.250 | groups 30 sampling, 5 ready | staleness 0.75 (max 2/2) | 4.3 s/step | this step 3 s',
  );
});
