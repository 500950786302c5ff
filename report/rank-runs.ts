// The order a comparison lists its runs in: best first by the last eval reward, else (no eval logged) by the last
// train reward; runs with neither come last, in the order given. A pure function so the report and a sweep's
// result can share it.
import type { RunData } from './run-data';

export interface Ranked {
  run: RunData;
  /** The number ranked by, and which reward it is. */
  score: number | null;
  by: 'eval' | 'train' | null;
}

const last = (run: RunData, key: string): number | undefined => run.folded.last[key];

export function rankRuns(runs: RunData[]): Ranked[] {
  const scored = runs.map((run, i): Ranked & { i: number } => {
    const ev = last(run, 'test/env/all/reward/total');
    if (ev !== undefined) return { run, score: ev, by: 'eval', i };
    const tr = last(run, 'env/all/reward/total');
    return tr !== undefined ? { run, score: tr, by: 'train', i } : { run, score: null, by: null, i };
  });
  // Eval outranks train as evidence: a run with an eval score is compared with runs that have one first.
  const tier = (r: Ranked) => (r.by === 'eval' ? 0 : r.by === 'train' ? 1 : 2);
  return scored
    .sort((a, b) => tier(a) - tier(b) || (b.score ?? 0) - (a.score ?? 0) || a.i - b.i)
    .map(({ run, score, by }) => ({ run, score, by }));
}
