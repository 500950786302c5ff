// Run files exported by several worker processes at once (a stale attempt still alive next to its retry), the run
// directory lock while its holder lives and after it died, and step records committed twice (in a real store).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logMetrics, saveCheckpoint } from '../../activities/record-run';
import { readJsonl, runPaths } from '../../records/run-files';
import { commitStepRecord, readStepRecord } from '../../activities/step-records';
import type { RunSettings, TrainStepResult } from '../../shared/run-types';
import { activityTestStore } from '../helpers/activity-store';

const store = activityTestStore();

const root = path.resolve(__dirname, '../..');
const STEPS = 40;

/** One writer process: logs steps 0..STEPS-1 and a checkpoint per step, starting at `startAt` (epoch ms). */
function writer(logPath: string, startAt: number): Promise<number> {
  const code = `
    const { logMetrics, saveCheckpoint } = require('./activities/record-run');
    const settings = { logPath: ${JSON.stringify(logPath)}, runName: 'four', storeAddress: ${JSON.stringify(store.server.url)} };
    const policy = { modelId: 'm', statePath: 'tinker://m/weights/s', samplerPath: 'tinker://m/sampler_weights/s', step: 0 };
    setTimeout(async () => {
      for (let s = 0; s < ${STEPS}; s++) {
        await logMetrics(settings, s, { 'env/all/reward/total': s / 10 }, [{ name: 'train', ph: 'X', ts: s, dur: 1, pid: 1, tid: 1 }]);
        await saveCheckpoint(settings, String(s).padStart(6, '0'), s, policy, false);
      }
      process.exit(0);
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

test('a lock whose holder is alive is never taken over, however long it stays silent; once the holder is gone, at once', async () => {
  const logPath = mkdtempSync(path.join(os.tmpdir(), 'agl-lock-'));
  const lockDir = path.join(logPath, '.write.lock');
  // A holder on this host whose event loop is stuck: alive, and the lock untouched for a minute.
  const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
  mkdirSync(lockDir);
  writeFileSync(path.join(lockDir, 'owner'), JSON.stringify({ host: os.hostname(), pid: holder.pid }));
  const old = new Date(Date.now() - 60_000);
  utimesSync(lockDir, old, old);
  const settings = { logPath, runName: 'lock', storeAddress: store.server.url } as RunSettings;
  let done = false;
  const logged = logMetrics(settings, 1, { 'env/all/reward/total': 1 }, []).then(() => (done = true));
  await new Promise((r) => setTimeout(r, 7_000));
  assert.equal(done, false, 'the lock of a live holder was taken over (a time-based lock goes stale after 5 s)');
  const killedAt = Date.now();
  holder.kill('SIGKILL');
  await logged;
  const waited = Date.now() - killedAt;
  assert.ok(waited < 3_000, `took ${waited} ms to take over the lock of a dead holder`);
  assert.deepEqual(readJsonl(runPaths(logPath).metrics), [{ step: 1, 'env/all/reward/total': 1 }]);
});

const resultAt = (statePath: string): TrainStepResult => ({
  state: { modelId: statePath.split('/')[2]!, statePath, samplerPath: statePath.replace('weights', 'sampler_weights'), step: 3 },
  metrics: {},
  skipped: false,
});

test('the first commit of a step from a parent stands; a commit from another parent is its own record', async () => {
  const settings = { logPath: mkdtempSync(path.join(os.tmpdir(), 'agl-steps-')), runName: 'steps', instanceId: 'i1', storeAddress: store.server.url } as RunSettings;
  const parent = 'tinker://a/weights/000002';
  const first = await commitStepRecord(settings, 3, { parentStatePath: parent, result: resultAt('tinker://a/weights/000003') });
  assert.equal(first.state.statePath, 'tinker://a/weights/000003');
  // A stale attempt on another worker finishes the same step on its own model later: it gets the first result.
  const late = await commitStepRecord(settings, 3, { parentStatePath: parent, result: resultAt('tinker://b/weights/000003') });
  assert.equal(late.state.statePath, 'tinker://a/weights/000003');
  assert.equal((await readStepRecord(settings, 3, parent))?.state.statePath, 'tinker://a/weights/000003');
  // A run restarted from another state gets the step from that state.
  const other = 'tinker://c/weights/000002';
  assert.equal((await commitStepRecord(settings, 3, { parentStatePath: other, result: resultAt('tinker://c/weights/000003') })).state.statePath, 'tinker://c/weights/000003');
  assert.equal((await readStepRecord(settings, 3, other))?.state.statePath, 'tinker://c/weights/000003');
  assert.equal(await readStepRecord(settings, 4, other), undefined);
  // Another instance of the run (a fresh run of the same name) does not see them.
  assert.equal(await readStepRecord({ ...settings, instanceId: 'i2' }, 3, parent), undefined);
});
