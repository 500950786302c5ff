// The run's files as exports of its records in the store (a real store over HTTP): an export after a crash tore
// its file's last line appends exactly what the file lacks; an export into a new directory (another host, or
// `client export`) gives the same bytes; a run directory of the version that kept records on local disk resumes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logMetrics, saveCheckpoint } from '../../activities/record-run';
import { exportCounts, exportRunFiles } from '../../activities/run-export';
import { readJsonl, runPaths } from '../../records/run-files';
import { readStepRecord } from '../../activities/step-records';
import type { PolicyState, RunSettings, TrainStepResult } from '../../shared/run-types';
import { activityTestStore } from '../helpers/activity-store';

const store = activityTestStore();

const scratch = () => mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-export-'));
const policy = (step: number): PolicyState => ({ modelId: 'm', statePath: `tinker://m/weights/${step}`, samplerPath: `tinker://m/sampler_weights/${step}`, step });
const row = (s: number) => ({ 'env/all/reward/total': s / 8, 'optim/kl': s === 2 ? NaN : s });

test('an export after a torn last line appends exactly the missing records; a fresh export has the same bytes', async () => {
  const settings = { logPath: scratch(), runName: 'torn', instanceId: 'i1', storeAddress: store.server.url } as RunSettings;
  const paths = runPaths(settings.logPath);
  for (let s = 0; s < 5; s++) await logMetrics(settings, s, row(s), [{ name: 'train', ph: 'X', ts: s, dur: 1, pid: 1, tid: 1 }]);
  await saveCheckpoint(settings, '000004', 4, policy(4), false);
  // An export killed in the middle of appending rows 3 and 4: the file ends in half of row 3.
  const text = readFileSync(paths.metrics, 'utf8');
  const row3 = text.indexOf('{"step": 3');
  truncateSync(paths.metrics, row3 + 12);
  await logMetrics(settings, 5, row(5), []);
  const steps = readJsonl(paths.metrics).map((r) => r.step);
  assert.deepEqual(steps, [0, 1, 2, 3, 4, 5], 'each step once, in order, after the torn tail');
  assert.ok(readFileSync(paths.metrics, 'utf8').includes('"optim/kl": NaN'), 'NaN kept as Python writes it');
  // Another directory (another host, `client export`): the same bytes, file by file.
  const elsewhere = scratch();
  await exportRunFiles(settings, elsewhere);
  for (const f of ['metrics', 'checkpoints', 'trace'] as const) {
    assert.equal(readFileSync(runPaths(elsewhere)[f], 'utf8'), readFileSync(paths[f], 'utf8'), f);
  }
  // Nothing new: an export writes nothing.
  const size = statSync(runPaths(elsewhere).metrics).size;
  await exportRunFiles(settings, elsewhere);
  assert.equal(statSync(runPaths(elsewhere).metrics).size, size);
});

test('an export reads only the records after the ones its files hold, however long the run', async () => {
  const settings = { logPath: scratch(), runName: 'flat', instanceId: 'i1', storeAddress: store.server.url } as RunSettings;
  const reads: number[] = [];
  for (let s = 0; s < 60; s++) {
    const before = exportCounts.recordsRead;
    await logMetrics(settings, s, row(s), [{ name: 'train', ph: 'X', ts: s, dur: 1, pid: 1, tid: 1 }]);
    reads.push(exportCounts.recordsRead - before);
  }
  // Step s writes 2 records (its trace event and metrics row); the first export of the process reads all there are.
  assert.deepEqual(reads.slice(1), Array(59).fill(2), 'each export read the step\'s 2 records, not the history');
});

test('a run directory whose records are on local disk (an older version) resumes: its records are imported once', async () => {
  const logPath = scratch();
  const paths = runPaths(logPath);
  const settings = { logPath, runName: 'legacy', instanceId: 'i1', storeAddress: store.server.url } as RunSettings;
  // What the older version left: step records in steps/, step 0's rows, a checkpoint.
  mkdirSync(paths.steps, { recursive: true });
  const initial: TrainStepResult = { state: policy(0), metrics: {}, skipped: false };
  const first: TrainStepResult = { state: policy(1), metrics: { 'optim/loss': 0.5 }, skipped: false };
  writeFileSync(path.join(paths.steps, '000000.json'), JSON.stringify({ parentStatePath: 'initial', result: initial }));
  writeFileSync(path.join(paths.steps, '000001.json'), JSON.stringify({ parentStatePath: policy(0).statePath, result: first }));
  writeFileSync(paths.metrics, '{"step": 0, "env/all/reward/total": 0.25}\n');
  writeFileSync(paths.checkpoints, '{"name": "000001", "batch": 1, "state_path": "tinker://m/weights/1", "sampler_path": "tinker://m/sampler_weights/1"}\n');
  writeFileSync(paths.trace, '{"name": "train", "ph": "X", "ts": 0, "dur": 1, "pid": 1, "tid": 1}\n');
  // The retried step finds its record; the run goes on with step 1's row after step 0's.
  assert.deepEqual(await readStepRecord(settings, 1, policy(0).statePath), first);
  assert.deepEqual(await readStepRecord(settings, 0, 'initial'), initial);
  await logMetrics(settings, 0, { 'env/all/reward/total': 0.25 }, []);
  await logMetrics(settings, 1, { 'env/all/reward/total': 0.5 }, [{ name: 'train', ph: 'X', ts: 1, dur: 1, pid: 1, tid: 1 }]);
  assert.deepEqual(readJsonl(paths.metrics).map((r) => r.step), [0, 1]);
  assert.equal(readJsonl(paths.trace).length, 2);
  // A host without the old files (a second worker) exports the whole run, old rows included.
  const elsewhere = scratch();
  await exportRunFiles(settings, elsewhere);
  for (const f of ['metrics', 'checkpoints', 'trace'] as const) {
    assert.equal(readFileSync(runPaths(elsewhere)[f], 'utf8'), readFileSync(paths[f], 'utf8'), f);
  }
});
