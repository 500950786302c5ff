// How a finished run reads in one line (`status`, `watch`): how far it got, its last rewards, its final checkpoint.
import type { TrainingRunResult } from '../shared/run-types';

const fmt = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(3));

export function resultLine(r: TrainingRunResult): string {
  const unit = r.asyncCounts ? 'steps' : 'batches';
  const of = r.asyncCounts ? `${r.batchesCompleted}` : `${r.batchesCompleted}/${r.numBatches}`;
  const m = r.lastMetrics;
  const evalReward = m['test/env/all/reward/total'];
  return [
    `${r.runName}: ${r.stoppedEarly ? 'stopped' : 'finished'} after ${of} ${unit}`,
    `last train reward ${fmt(m['env/all/reward/total'])}${evalReward !== undefined ? `, eval ${fmt(evalReward)}` : ''}`,
    `final checkpoint ${r.finalCheckpoint ?? '(none)'}`,
  ].join('; ');
}
