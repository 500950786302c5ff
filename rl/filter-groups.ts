// remove_constant_reward_groups (cookbook rl/data_processing.py), applied once to the whole batch
// as Agent-lightning does (not per group, which made it a no-op in the Oct/Dec-2025 cookbook loop).
import { totalRewards } from './advantages';
import type { TrajectoryGroup } from './types';

/** Exact equality, as the cookbook's all_same: 0.1 + 0.2 and 0.3 are different rewards. */
export function allSame(xs: readonly number[]): boolean {
  return xs.every((x) => x === xs[0]);
}

/**
 * Keep groups whose total rewards are not all equal (they carry no gradient otherwise).
 * If every group is constant, keep the first one so the batch is never empty.
 */
export function removeConstantRewardGroups<G extends TrajectoryGroup>(groups: readonly G[]): G[] {
  const kept = groups.filter((g) => !allSame(totalRewards(g)));
  return kept.length > 0 ? kept : groups.slice(0, 1);
}
