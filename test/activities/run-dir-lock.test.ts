// Run files written by several worker processes at once (a stale attempt still alive next to its retry) and after
// a writer was killed holding the lock; and step records committed twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logMetrics, saveCheckpoint } from '../../activities/record-run';
import { readJsonl, runPaths } from '../../activities/run-files';
import { commitStepRecord, readStepRecord } from '../../activities/step-records';
import type { PolicyState, RunSettings, TrainStepResult } from '../../workflows/run-types';

const root = path.resolve(__dirname, '../..');
const STEPS = 40;

/** One writer process: logs steps 0..STEPS-1 and a checkpoint per step, starting at `startAt` (epoch ms). */
function writer(logPath: string, startAt: number): Promise<number> {
  const code = `
    const { logMetrics, saveCheckpoint } = require('./activities/record-run');
    const settings = { logPath: ${JSON.stringify(logPath)} };
    const policy = { modelId: 'm', statePath: 'tinker://m/weights/s', samplerPath: 'tinker://m/sampler_weights/s', step: 0 };
    setTimeout(async () => {
      for (let s = 0; s < ${STEPS}; s++) {
        await logMetrics(settings, s, { 'env/all/reward/total': s / 10 }, [{ name: 'train', ph: 'X', ts: s, dur: 1, pid: 1, tid: 1 }]);
        await saveCheckpoint(settings, String(s).padStart(6, '0'), s, policy, false);
      }
    }, ${startAt} - Date.now());`;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', code], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((resolve) => child.on('exit', (c) => resolve(c ?? -1)));
}

test('four processes logging the same steps at the same moment write each row once', async () => {
  const logPath = mkdtempSync(path.join(os.tmpdir(), 'agl-lock-'));
  const startAt = Date.now() + 3_000; // after all four have loaded
  const codes = await Promise.all([0, 1, 2, 3].map(() => writer(logPath, startAt)));
  assert.deepEqual(codes, [0, 0, 0, 0]);
  const paths = runPaths(logPath);
  const steps = readJsonl(paths.metrics).map((r) => r.step);
  assert.deepEqual(steps.slice().sort((a, b) => Number(a) - Number(b)), [...Array(STEPS).keys()]);
  assert.equal(readJsonl(paths.checkpoints).length, STEPS);
  assert.equal(readJsonl(paths.trace).length, STEPS);
});

test('a lock left by a killed writer is taken over once stale', async () => {
  const logPath = mkdtempSync(path.join(os.tmpdir(), 'agl-lock-'));
  const lockDir = path.join(logPath, '.write.lock');
  mkdirSync(lockDir); // as a writer killed with -9 while holding it leaves it
  const t0 = Date.now();
  const before = new Date(t0 - 1_000);
  utimesSync(lockDir, before, before);
  const settings = { logPath } as RunSettings;
  const policy: PolicyState = { modelId: 'm', statePath: 'tinker://m/weights/a', samplerPath: 'tinker://m/sampler_weights/a', step: 1 };
  await logMetrics(settings, 1, { 'env/all/reward/total': 1 }, []);
  await saveCheckpoint(settings, 'final', 1, policy, true);
  const waited = Date.now() - t0;
  assert.ok(waited >= 3_000, `took the lock after ${waited} ms, while its holder might still have been alive`);
  assert.deepEqual(readJsonl(runPaths(logPath).metrics), [{ step: 1, 'env/all/reward/total': 1 }]);
  assert.equal(readJsonl(runPaths(logPath).checkpoints).length, 1);
});

const resultAt = (statePath: string): TrainStepResult => ({
  state: { modelId: statePath.split('/')[2], statePath, samplerPath: statePath.replace('weights', 'sampler_weights'), step: 3 },
  metrics: {},
  skipped: false,
});

test('the first commit of a step from a parent stands; a commit from another parent replaces it', () => {
  const logPath = mkdtempSync(path.join(os.tmpdir(), 'agl-steps-'));
  const parent = 'tinker://a/weights/000002';
  const first = commitStepRecord(logPath, 3, { parentStatePath: parent, result: resultAt('tinker://a/weights/000003') });
  assert.equal(first.state.statePath, 'tinker://a/weights/000003');
  // A stale attempt on another worker finishes the same step on its own model later: it gets the first result.
  const late = commitStepRecord(logPath, 3, { parentStatePath: parent, result: resultAt('tinker://b/weights/000003') });
  assert.equal(late.state.statePath, 'tinker://a/weights/000003');
  assert.equal(readStepRecord(logPath, 3, parent)?.state.statePath, 'tinker://a/weights/000003');
  // A run restarted from another state owns the step number now.
  const other = 'tinker://c/weights/000002';
  assert.equal(commitStepRecord(logPath, 3, { parentStatePath: other, result: resultAt('tinker://c/weights/000003') }).state.statePath, 'tinker://c/weights/000003');
  assert.equal(readStepRecord(logPath, 3, parent), undefined);
  assert.equal(readStepRecord(logPath, 3, other)?.state.statePath, 'tinker://c/weights/000003');
});
