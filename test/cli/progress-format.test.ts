// The one progress line `watch` and `status` print, for runs of this code and of older code (no `changes`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressLine } from '../../cli/progress-format';
import type { Progress } from '../../shared/run-types';

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

test('a running batch: its number counted from 0 (metrics.jsonl step 4), rewards, pace and time in the batch', () => {
  assert.equal(progressLine(base, 13_000), 'hello | batch 4/20 | training | reward 0.500 | eval 0.250 | 4.3 s/batch | this batch 3 s');
});

test('the first and the last batch', () => {
  assert.match(progressLine({ ...base, batch: 0 }, 13_000), /^hello \| batch 0\/20 \| training/);
  assert.match(progressLine({ ...base, batch: 19 }, 13_000), /^hello \| batch 19\/20 \| training/);
});

test('what the run waits for follows the phase; before the first batch, instead of the usual steps', () => {
  assert.equal(
    progressLine(base, 13_000, [], 'waiting for runners'),
    'hello | batch 4/20 | training | waiting for runners | reward 0.500 | eval 0.250 | 4.3 s/batch | this batch 3 s',
  );
  const starting: Progress = { ...base, runName: '', batch: 0, numBatches: 0, phase: 'starting' };
  assert.equal(progressLine(starting, 13_000), 'run | starting | validating the config, reading the dataset, creating the model');
  assert.equal(progressLine(starting, 13_000, [], 'building the base model'), 'run | starting | building the base model');
});

test('paused, configured and stopping are shown', () => {
  const p: Progress = { ...base, paused: true, stopRequested: true, changes: { learningRate: 0.001, evalEvery: 10 } };
  assert.equal(
    progressLine(p, 13_000),
    'hello | batch 4/20 | PAUSED | reward 0.500 | eval 0.250 | 4.3 s/batch | this batch 3 s | configured learningRate=0.001 evalEvery=10 | stopping after this batch',
  );
});

test('a run of older workflow code, without changes, and a finished one: how many batches were done', () => {
  const { changes: _c, ...old } = base;
  assert.equal(progressLine({ ...(old as Progress), phase: 'done', batch: 20 }, 13_000), 'hello | 20/20 batches done | done | reward 0.500 | eval 0.250 | 4.3 s/batch');
  assert.equal(progressLine({ ...base, phase: 'stopped', batch: 7 }, 13_000), 'hello | 7/20 batches done | stopped | reward 0.500 | eval 0.250 | 4.3 s/batch');
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
    'hello | step 4/~20 | waiting for groups | reward 0.500 | eval 0.250 | groups 30 sampling, 5 ready | staleness 0.75 (max 2/2) | 4.3 s/step | this step 3 s',
  );
});
