// How a run's progress reads to a person: one line, the same in a terminal and in a log.
import type { Progress } from '../shared/run-types';
import { positionText, unitOf } from '../workflows/batch-numbering';

const fmt = (x: number | undefined, digits = 3) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

const BARS = '▁▂▃▄▅▆▇█';

/**
 * The last `width` values as bars, one character each; rewards within 0..1 on that fixed scale (so a flat 0.9
 * reads high), anything else between its own min and max. A missing value is a space.
 */
export function sparkline(values: readonly (number | null)[], width = 24): string {
  const shown = values.slice(-width);
  const finite = shown.filter((v): v is number => v !== null && Number.isFinite(v));
  if (finite.length === 0) return '';
  const unit = finite.every((v) => v >= 0 && v <= 1);
  const lo = unit ? 0 : Math.min(...finite);
  const hi = unit ? 1 : Math.max(...finite);
  return shown
    .map((v) => {
      if (v === null || !Number.isFinite(v)) return ' ';
      const f = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      return BARS[Math.min(BARS.length - 1, Math.round(f * (BARS.length - 1)))];
    })
    .join('');
}

/** Train reward per step, gathered from the progress a watcher sees (each step's row arrives as lastMetrics). */
export class RewardHistory {
  private readonly byStep = new Map<number, number>();

  observe(p: Progress): void {
    const step = p.lastMetrics['progress/batch'];
    const reward = p.lastMetrics['env/all/reward/total'];
    if (step !== undefined && reward !== undefined) this.byStep.set(step, reward);
  }

  /** Rewards in step order; a step the watcher never saw is null. */
  values(): (number | null)[] {
    if (this.byStep.size === 0) return [];
    const steps = [...this.byStep.keys()];
    const first = Math.min(...steps);
    const last = Math.max(...steps);
    return Array.from({ length: last - first + 1 }, (_, i) => this.byStep.get(first + i) ?? null);
  }
}

/**
 * One line; with `rewards` (train reward per step so far), a sparkline of them follows the reward; with `waiting`,
 * what the run waits for (a base model being built, runners) follows the phase. Batches count from 0, as
 * metrics.jsonl's step (workflows/batch-numbering.ts).
 */
export function progressLine(p: Progress, nowMs: number = Date.now(), rewards: readonly (number | null)[] = [], waiting?: string): string {
  if (p.numBatches === 0) {
    return `${p.runName || 'run'} | ${p.phase} | ${waiting ?? 'validating the config, reading the dataset, creating the model'}`;
  }
  const reward = p.lastMetrics['env/all/reward/total'];
  const evalReward = p.lastMetrics['test/env/all/reward/total'];
  const elapsed = Math.max(0, (nowMs - p.batchStartedAtMs) / 1000);
  // Async runs count optimizer steps, and the number of steps is only known once every group is in.
  const unit = unitOf(!!p.async);
  const ended = p.phase === 'done' || p.phase === 'stopped';
  const parts = [
    `${p.runName}`,
    positionText({ batch: p.batch, numBatches: p.numBatches, phase: p.phase, async: !!p.async }),
    p.paused ? 'PAUSED' : p.phase,
    ...(waiting ? [waiting] : []),
    `reward ${fmt(reward)}${rewards.length >= 2 ? ` ${sparkline(rewards)}` : ''}`,
  ];
  if (evalReward !== undefined) parts.push(`eval ${fmt(evalReward)}`);
  if (p.async) {
    const a = p.async;
    parts.push(`groups ${a.inFlight} sampling, ${a.finished} ready`);
    const st = p.lastMetrics['async/staleness_mean'];
    if (st !== undefined) parts.push(`staleness ${fmt(st, 2)} (max ${fmt(p.lastMetrics['async/staleness_max'], 0)}/${a.maxStepsOffPolicy})`);
  }
  if (p.secondsPerBatch !== null) parts.push(`${fmt(p.secondsPerBatch, 1)} s/${unit}`);
  if (!ended) parts.push(`this ${unit} ${elapsed.toFixed(0)} s`);
  // Absent from runs started by older workflow code.
  const changed = Object.entries(p.changes ?? {});
  if (changed.length) parts.push(`configured ${changed.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (p.stopRequested && p.phase !== 'stopped') parts.push(`stopping after this ${unit}`);
  // Said on every line until fixed: a run without rewards learns nothing while looking fine (reward-watch.ts).
  if (p.pauseReason) parts.push(`PAUSED BY THE RUN: ${p.pauseReason}`);
  else if (p.warning) parts.push(`WARNING: ${p.warning}`);
  return parts.join(' | ');
}
