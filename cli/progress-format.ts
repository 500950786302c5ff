// How a run's progress reads to a person: one line, the same in a terminal and in a log.
import type { Progress } from '../workflows/run-types';

const fmt = (x: number | undefined, digits = 3) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

export function progressLine(p: Progress, nowMs: number = Date.now()): string {
  if (p.numBatches === 0) return `${p.runName || 'run'} | ${p.phase} (validating the config, reading the dataset, creating the model)`;
  const reward = p.lastMetrics['env/all/reward/total'];
  const evalReward = p.lastMetrics['test/env/all/reward/total'];
  const elapsed = Math.max(0, (nowMs - p.batchStartedAtMs) / 1000);
  // Async runs count optimizer steps, and the number of steps is only known once every group is in.
  const unit = p.async ? 'step' : 'batch';
  const parts = [
    `${p.runName}`,
    `${unit} ${Math.min(p.batch + (p.phase === 'done' ? 0 : 1), p.numBatches)}/${p.async ? '~' : ''}${p.numBatches}`,
    p.paused ? 'PAUSED' : p.phase,
    `reward ${fmt(reward)}`,
  ];
  if (evalReward !== undefined) parts.push(`eval ${fmt(evalReward)}`);
  if (p.async) {
    const a = p.async;
    parts.push(`groups ${a.inFlight} sampling, ${a.finished} ready`);
    const st = p.lastMetrics['async/staleness_mean'];
    if (st !== undefined) parts.push(`staleness ${fmt(st, 2)} (max ${fmt(p.lastMetrics['async/staleness_max'], 0)}/${a.maxStepsOffPolicy})`);
  }
  if (p.secondsPerBatch !== null) parts.push(`${fmt(p.secondsPerBatch, 1)} s/${unit}`);
  if (p.phase !== 'done' && p.phase !== 'stopped') parts.push(`this ${unit} ${elapsed.toFixed(0)} s`);
  // Absent from runs started by older workflow code.
  const changed = Object.entries(p.changes ?? {});
  if (changed.length) parts.push(`configured ${changed.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (p.stopRequested && p.phase !== 'stopped') parts.push(`stopping after this ${unit}`);
  return parts.join(' | ');
}
