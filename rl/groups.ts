// Building a TrajectoryGroup from finished rollouts, as do_group_of_group_rollouts in
// Agent-lightning's examples/tinker/agl_tinker/rollout.py.
import type { Metrics, RolloutStatus, Trajectory, TrajectoryGroup } from './types';

const FINISHED: readonly RolloutStatus[] = ['succeeded', 'failed', 'cancelled'];

/** The extra per-group dict AGL appends: empty trajectories and how the rollouts ended. */
export function aglGroupMetrics(trajectories: readonly Trajectory[], statuses: readonly RolloutStatus[]): Metrics {
  const n = trajectories.length;
  const frac = (count: number) => (n > 0 ? count / n : 0);
  const metrics: Metrics = {
    'by_group/frac_empty_traj': frac(trajectories.filter((t) => t.transitions.length === 0).length),
  };
  for (const s of FINISHED) metrics[`by_group/frac_status_${s}`] = frac(statuses.filter((x) => x === s).length);
  metrics['by_group/frac_status_others'] = frac(statuses.filter((x) => !FINISHED.includes(x)).length);
  return metrics;
}

/**
 * One group per task. Agent-lightning tasks have no group reward (compute_group_rewards
 * defaults to 0.0 and {} per trajectory), so the metrics list is G empty dicts plus the AGL dict;
 * only ever averaged, so the extra entry is harmless.
 */
export function makeTrajectoryGroup(
  trajectories: readonly Trajectory[],
  statuses: readonly RolloutStatus[],
): TrajectoryGroup {
  if (trajectories.length !== statuses.length) {
    throw new Error(`makeTrajectoryGroup: ${trajectories.length} trajectories but ${statuses.length} statuses`);
  }
  return {
    trajectories: [...trajectories],
    finalRewards: trajectories.map(() => 0.0),
    metrics: [...trajectories.map(() => ({})), aglGroupMetrics(trajectories, statuses)],
  };
}
