// What one logMetrics costs as a run gets long: the activity called for steps 0..--steps-1 (a real store process,
// its database on disk; the report, TensorBoard and W&B offline on), each call timed; prints the median and p90
// of steps 100-199 and of the last 100 steps. The last 100 should cost what steps 100-199 do.
//   npm run bench -- log-metrics [--steps 1500] [--json FILE]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logMetrics } from '../../activities/record-run';
import { closeServices } from '../../activities/services';
import type { TraceEvent } from '../../activities/types';
import { startStoreServer } from '../../store/server';
import type { RunSettings } from '../../shared/run-types';
import { flag, loadAverage, mean, quantile, writeResult } from './bench-kit';

const args = process.argv.slice(2);
const STEPS = flag(args, 'steps', 1500);

/** About the keys a real step logs (env/, optim/, time/, progress/ ...). */
function metricsOf(step: number): Record<string, number> {
  const m: Record<string, number> = { 'progress/done_frac': (step + 1) / STEPS, 'env/all/reward/total': Math.sin(step / 50) };
  for (let i = 0; i < 60; i++) m[`bench/metric_${String(i).padStart(2, '0')}`] = (step * 31 + i * 7) % 101 / 100;
  return m;
}

function traceOf(step: number): TraceEvent[] {
  return ['publishPolicy', 'collectRollouts', 'trainStep', 'logMetrics'].map((name, i) => ({ name, ph: 'X', ts: step * 1e6 + i * 1e5, dur: 9e4, pid: 1, tid: 1 }));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-bench-logmetrics-'));
  const store = await startStoreServer({ dbPath: path.join(dir, 'store.db'), port: 0, log: () => {} });
  process.env.WANDB_MODE = 'offline';
  const settings = {
    runName: 'bench', instanceId: 'bench-1', logPath: path.join(dir, 'run'), storeAddress: store.url,
    tensorboardDir: path.join(dir, 'tb'), wandbProject: 'bench', wandbName: null,
  } as unknown as RunSettings;
  const times: number[] = [];
  try {
    for (let step = 0; step < STEPS; step++) {
      const t0 = performance.now();
      await logMetrics(settings, step, metricsOf(step), traceOf(step));
      times.push(performance.now() - t0);
    }
  } finally {
    await closeServices();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const window = (from: number) => times.slice(from, from + 100).sort((a, b) => a - b);
  const early = window(100);
  const late = window(STEPS - 100);
  const result = {
    steps: STEPS,
    earlyMedianMs: quantile(early, 0.5), earlyP90Ms: quantile(early, 0.9), earlyMeanMs: mean(early), lateMeanMs: mean(late),
    lateMedianMs: quantile(late, 0.5), lateP90Ms: quantile(late, 0.9),
    ratio: quantile(late, 0.5) / quantile(early, 0.5),
    load: loadAverage(),
  };
  process.stdout.write(`logMetrics over ${STEPS} steps (report, TensorBoard, W&B offline; load average ${result.load}):\n` +
    `  steps 100-199: median ${result.earlyMedianMs.toFixed(1)} ms, p90 ${result.earlyP90Ms.toFixed(1)} ms, mean ${result.earlyMeanMs.toFixed(1)} ms\n` +
    `  steps ${STEPS - 100}-${STEPS - 1}: median ${result.lateMedianMs.toFixed(1)} ms, p90 ${result.lateP90Ms.toFixed(1)} ms, mean ${result.lateMeanMs.toFixed(1)} ms (median ${result.ratio.toFixed(2)}x)\n`);
  writeResult(args, result);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
