// Returns and group-centred advantages (cookbook rl/data_processing.py: compute_advantages).
import type { TrajectoryGroup } from './types';

/** Per trajectory: sum of its step rewards plus the group's final reward for it (get_total_rewards). */
export function totalRewards(group: TrajectoryGroup): number[] {
  return group.trajectories.map((traj, g) => {
    const stepSum = traj.transitions.reduce((acc, t) => acc + t.reward, 0);
    return stepSum + (group.finalRewards[g] ?? 0);
  });
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/**
 * A = R - mean(R) within each group. No std division, no clipping, no discounting; every
 * action token of a trajectory later gets the same A. A group of one always gets A = 0.
 * (The cookbook computes this in float32; we keep float64, the wire rounds to float32 anyway.)
 */
export function computeAdvantages(groups: readonly TrajectoryGroup[]): number[][] {
  return groups.map((group) => {
    const rewards = totalRewards(group);
    const m = mean(rewards);
    return rewards.map((r) => r - m);
  });
}
