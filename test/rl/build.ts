// Small builders for rl tests: transitions and groups with only the fields a test cares about.
import type { Transition, Trajectory, TrajectoryGroup } from '../../rl/types';

export function tr(ob: number[], acTokens: number[], acLogprobs: number[] | null, reward = 0, metrics = {}): Transition {
  return { ob, acTokens, acLogprobs, reward, episodeDone: false, metrics };
}

export function traj(...transitions: Transition[]): Trajectory {
  return { transitions, finalOb: [] };
}

/** A group whose trajectories are single transitions with the given rewards. */
export function groupOfRewards(rewards: number[]): TrajectoryGroup {
  return {
    trajectories: rewards.map((r, i) => traj(tr([1, 2], [3 + i], [-0.5], r))),
    finalRewards: rewards.map(() => 0),
    metrics: rewards.map(() => ({})),
  };
}
