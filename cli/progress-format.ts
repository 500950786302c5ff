// How a run's progress reads to a person: one line, the same in a terminal and in a log.
import type { Progress } from '../workflows/run-types';

const fmt = (x: number | undefined, digits = 3) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

export function progressLine(p: Progress, nowMs: number = Date.now()): string {
  if (p.numBatches === 0) return `${p.runName || 'run'} | ${p.phase} (validating the config, reading the dataset, creating the model)`;
  const reward = p.lastMetrics['env/all/reward/total'];
  const evalReward = p.lastMetrics['test/env/all/reward/total'];
  const elapsed = Math.max(0, (nowMs - p.batchStartedAtMs) / 1000);
  const parts = [
    `${p.runName}`,
    `batch ${Math.min(p.batch + (p.phase === 'done' ? 0 : 1), p.numBatches)}/${p.numBatches}`,
    p.paused ? 'PAUSED' : p.phase,
    `reward ${fmt(reward)}`,
  ];
  if (evalReward !== undefined) parts.push(`eval ${fmt(evalReward)}`);
  if (p.secondsPerBatch !== null) parts.push(`${fmt(p.secondsPerBatch, 1)} s/batch`);
  if (p.phase !== 'done' && p.phase !== 'stopped') parts.push(`this batch ${elapsed.toFixed(0)} s`);
  // Absent from runs started by older workflow code.
  const changed = Object.entries(p.changes ?? {});
  if (changed.length) parts.push(`configured ${changed.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (p.stopRequested && p.phase !== 'stopped') parts.push('stopping after this batch');
  return parts.join(' | ');
}
