// The end-of-run summary: the reward curve from metrics.jsonl, time per batch, where the files are.
import { readJsonl } from '../records/run-files';

export interface CurvePoint {
  step: number;
  reward: number | null;
  evalReward: number | null;
  seconds: number | null;
}

export function rewardCurve(metricsFile: string): CurvePoint[] {
  return readJsonl(metricsFile)
    .map((r) => ({
      step: Number(r.step),
      reward: typeof r['env/all/reward/total'] === 'number' ? (r['env/all/reward/total'] as number) : null,
      evalReward: typeof r['test/env/all/reward/total'] === 'number' ? (r['test/env/all/reward/total'] as number) : null,
      seconds: typeof r['time/total'] === 'number' ? (r['time/total'] as number) : null,
    }))
    .sort((a, b) => a.step - b.step);
}

export function formatCurve(points: CurvePoint[]): string {
  const f = (x: number | null, d = 3) => (x === null || !Number.isFinite(x) ? '    -' : x.toFixed(d).padStart(6));
  const lines = ['batch  reward    eval  seconds'];
  for (const p of points) lines.push(`${String(p.step).padStart(5)}  ${f(p.reward)}  ${f(p.evalReward)}  ${f(p.seconds, 1)}`);
  const secs = points.map((p) => p.seconds).filter((s): s is number => s !== null);
  if (secs.length) lines.push(`mean ${(secs.reduce((a, b) => a + b, 0) / secs.length).toFixed(1)} s per batch over ${secs.length} batches`);
  return lines.join('\n');
}
