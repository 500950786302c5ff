// What each finished step says that an operator must hear: rollouts that succeeded without a reward (the run learns
// nothing) and batches skipped with their weights unchanged. The latest such note is the run's warning (progress
// query, progress line, UI current details); after `pauseAfterBatchesWithoutReward` steps in a row without any
// reward the run pauses itself with the reason, and `resume` lets it go on once the agents are fixed.
import { batchWithoutRewards, missingRewardNote } from '../shared/missing-rewards';
import type { Metrics, RewardWatchState } from '../shared/run-types';

const plural = (unit: string) => (unit.endsWith('h') ? `${unit}es` : `${unit}s`);

export type { RewardWatchState };

export class RewardWatch {
  state: RewardWatchState;

  constructor(carried?: RewardWatchState) {
    this.state = carried ?? { batchesWithoutReward: 0, warning: null };
  }

  /** After step `step` (metrics as logged): updates the warning; returns why the run must pause, or null. */
  observe(step: number, unit: string, metrics: Metrics, skipReason: string | undefined, pauseAfter: number): string | null {
    const notes: string[] = [];
    const missing = missingRewardNote(metrics);
    this.state.batchesWithoutReward = batchWithoutRewards(metrics) ? this.state.batchesWithoutReward + 1 : 0;
    const inARow = this.state.batchesWithoutReward;
    if (missing) notes.push(`${unit} ${step}: ${missing}${inARow > 1 ? ` (${inARow} ${plural(unit)} in a row without any reward)` : ''}`);
    if (skipReason) notes.push(`${unit} ${step} skipped, weights unchanged: ${skipReason}`);
    this.state.warning = notes.length ? notes.join('; ') : null;
    if (pauseAfter <= 0 || inARow < pauseAfter) return null;
    return `paused after ${inARow} ${plural(unit)} whose rollouts carried no reward. ${missing ?? ''} Fix the agents or runners, ` +
      `then resume the run (npm run client -- resume <run>); pauseAfterBatchesWithoutReward: 0 in the run config turns this pause off`;
  }

  /** `resume`: count afresh (the operator says it is fixed; if not, the run pauses again after as many steps). */
  resumed(): void {
    this.state.batchesWithoutReward = 0;
  }
}
