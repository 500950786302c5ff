// logMetrics after an older version died between its two writes (a trace line in the file that the store lacks):
// the export completes the step's trace and writes the metrics row, and nothing ends up twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logMetrics } from '../../activities/record-run';
import { appendJsonl, readJsonl, runPaths } from '../../records/run-files';
import type { RunSettings } from '../../shared/run-types';
import type { TraceEvent } from '../../activities/types';
import { activityTestStore } from '../helpers/activity-store';

const store = activityTestStore();

test('a retried logMetrics finishes a half-written trace and writes the row once', async () => {
  const logPath = mkdtempSync(path.join(os.tmpdir(), 'agl-record-'));
  const settings = { logPath, runName: 'half', storeAddress: store.server.url } as RunSettings;
  const paths = runPaths(logPath);
  const events: TraceEvent[] = [
    { name: 'collect', ph: 'X', ts: 1.5, dur: 2, pid: 1, tid: 1 },
    { name: 'train', ph: 'X', ts: 3.5, dur: 4.25, pid: 1, tid: 1 },
  ];
  // The first attempt died after its first trace event.
  appendJsonl(paths.trace, events[0]);
  await logMetrics(settings, 0, { 'env/all/reward/total': 0.5 }, events);
  await logMetrics(settings, 0, { 'env/all/reward/total': 0.5 }, events);
  assert.deepEqual(readJsonl(paths.trace), events);
  assert.deepEqual(readJsonl(paths.metrics), [{ step: 0, 'env/all/reward/total': 0.5 }]);
});
