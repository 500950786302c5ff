// metrics.jsonl, checkpoints.jsonl and trace_events.jsonl stay valid JSONL for any reader (jq, Python's json)
// after a crash mid-write and through a full disk: a torn line is cut off by the next write (the retry of the step
// that tore it), and a write the disk cannot hold leaves nothing behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logMetrics, saveCheckpoint } from '../../activities/record-run';
import { appendJsonl, runPaths } from '../../records/run-files';
import type { PolicyState, RunSettings } from '../../shared/run-types';
import { mountSmallVolume } from '../helpers/small-volume';
import { activityTestStore } from '../helpers/activity-store';

const store = activityTestStore();

/** Every line parsed by jq and by Python's json module, as a user's script would read the file. */
function readByOthers(file: string): unknown[] {
  const viaJq = execFileSync('jq', ['-c', '.', file], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  const viaPython = execFileSync('python3', ['-c', 'import json,sys\nfor l in open(sys.argv[1]): print(json.dumps(json.loads(l)))', file], { encoding: 'utf8' })
    .trim().split('\n').filter(Boolean);
  assert.equal(viaJq.length, viaPython.length);
  return viaPython.map((l) => JSON.parse(l));
}

const policy = (step: number): PolicyState => ({ modelId: 'm', statePath: `tinker://m/weights/${step}`, samplerPath: `tinker://m/sampler_weights/${step}`, step });

test('a torn last line (crash mid-write) is cut off by the retried write: jq and Python read every row', async () => {
  const logPath = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-jsonl-'));
  const settings = { logPath, runName: 'r', storeAddress: store.server.url } as RunSettings;
  const paths = runPaths(logPath);
  await logMetrics(settings, 0, { 'env/all/reward/total': 0.25 }, [{ name: 'train', ph: 'X', ts: 1, dur: 2, pid: 1, tid: 1 }]);
  await saveCheckpoint(settings, '000001', 1, policy(1), false);
  // A worker killed in the middle of writing step 1's row, a checkpoint row and a trace event.
  appendFileSync(paths.metrics, '{"step": 1, "env/all/rew');
  appendFileSync(paths.checkpoints, '{"name": "000002", "ba');
  appendFileSync(paths.trace, '{"name": "tr');
  // Temporal retries the steps.
  await logMetrics(settings, 1, { 'env/all/reward/total': 0.5 }, [{ name: 'train', ph: 'X', ts: 3, dur: 2, pid: 1, tid: 1 }]);
  await saveCheckpoint(settings, '000002', 2, policy(2), false);
  assert.deepEqual(readByOthers(paths.metrics), [{ step: 0, 'env/all/reward/total': 0.25 }, { step: 1, 'env/all/reward/total': 0.5 }]);
  assert.deepEqual((readByOthers(paths.checkpoints) as { name: string }[]).map((r) => r.name), ['000001', '000002']);
  assert.equal(readByOthers(paths.trace).length, 2);
});

test('a row the disk cannot hold leaves no partial line; once space is back the next row lands', () => {
  const vol = mountSmallVolume(256 * 1024);
  try {
    const file = path.join(vol.dir, 'run', 'metrics.jsonl');
    appendJsonl(file, { step: 0, x: 1 });
    vol.fill();
    // A row larger than what is left: the write fails part way.
    const big = { step: 1, blob: 'y'.repeat(64 * 1024) };
    assert.throws(() => appendJsonl(file, big), /ENOSPC/);
    assert.ok(readFileSync(file, 'utf8').endsWith('\n'), 'no torn tail left by the failed write');
    assert.deepEqual(readByOthers(file), [{ step: 0, x: 1 }]);
    vol.free();
    appendJsonl(file, big);
    assert.deepEqual((readByOthers(file) as { step: number }[]).map((r) => r.step), [0, 1]);
  } finally {
    vol.unmount();
  }
});
