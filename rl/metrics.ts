// Trajectory metrics under the cookbook's names (rl/metric_util.py: compute_trajectory_metrics).
// Divisions by zero return 0.0, as the cookbook's HEAD does (the Dec-2025 version crashed).
import { totalRewards } from './advantages';
import { allSame } from './filter-groups';
import type { Metrics, TrajectoryGroup } from './types';

const ratio = (a: number, b: number) => (b > 0 ? a / b : 0.0);

/** Mean of each key over the dicts that contain it (utils/misc_utils.dict_mean). */
export function dictMean(dicts: readonly Metrics[]): Metrics {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const d of dicts) {
    for (const [k, v] of Object.entries(d)) {
      const s = sums.get(k) ?? { sum: 0, n: 0 };
      s.sum += v;
      s.n += 1;
      sums.set(k, s);
    }
  }
  const out: Metrics = {};
  for (const [k, { sum, n }] of sums) out[k] = sum / n;
  return out;
}

/** A group is mixed when its returns differ, else all good (>= goodThreshold) or all bad. */
export function byGroupMetrics(groups: readonly TrajectoryGroup[], goodThreshold = 0.5): Metrics {
  let mixed = 0;
  let good = 0;
  let bad = 0;
  for (const g of groups) {
    const rewards = totalRewards(g);
    if (!allSame(rewards)) mixed += 1;
    else if (rewards.length > 0 && rewards[0]! >= goodThreshold) good += 1;
    else bad += 1;
  }
  return {
    'by_group/frac_mixed': ratio(mixed, groups.length),
    'by_group/frac_all_good': ratio(good, groups.length),
    'by_group/frac_all_bad': ratio(bad, groups.length),
  };
}

/** Metrics of a set of groups, without the `env/<tag>/` prefix. */
export function trajectoryMetrics(groups: readonly TrajectoryGroup[]): Metrics {
  const trajs = groups.flatMap((g) => g.trajectories);
  const transitions = trajs.flatMap((t) => t.transitions);
  const totalTurns = transitions.length;
  const totalAc = transitions.reduce((a, t) => a + t.acTokens.length, 0);
  const totalOb = transitions.reduce((a, t) => a + t.ob.length, 0);
  const rewards = groups.flatMap(totalRewards);
  const metrics: Metrics = {
    ac_tokens_per_turn: ratio(totalAc, totalTurns),
    ob_tokens_per_turn: ratio(totalOb, totalTurns),
    turns_per_episode: ratio(totalTurns, trajs.length),
    total_episodes: trajs.length,
    total_turns: totalTurns,
    total_ac_tokens: totalAc,
    total_ob_tokens: totalOb,
    'reward/total': ratio(rewards.reduce((a, b) => a + b, 0), rewards.length),
  };
  // Step metrics and group metrics share one mean, so a key may come from either kind.
  Object.assign(metrics, dictMean([...transitions.map((t) => t.metrics), ...groups.flatMap((g) => g.metrics)]));
  Object.assign(metrics, byGroupMetrics(groups));
  return metrics;
}

/**
 * `env/all/...` for every group, plus `env/<tag>/...` when some tag covers a strict subset of the
 * groups. Tags are matched to groups by position (a shorter tag list leaves the rest untagged).
 */
export function computeTrajectoryMetrics(
  groups: readonly TrajectoryGroup[],
  tagsPerGroup: readonly (readonly string[])[] = [],
): Metrics {
  const byTag = new Map<string, TrajectoryGroup[]>();
  groups.forEach((g, i) => {
    for (const tag of tagsPerGroup[i] ?? []) {
      const list = byTag.get(tag) ?? [];
      list.push(g);
      byTag.set(tag, list);
    }
  });
  const out: Metrics = {};
  const nontrivial = [...byTag.values()].some((list) => list.length < groups.length);
  if (nontrivial) {
    for (const [tag, list] of byTag) Object.assign(out, prefixMetrics(`env/${tag}/`, trajectoryMetrics(list)));
  }
  Object.assign(out, prefixMetrics('env/all/', trajectoryMetrics(groups)));
  return out;
}

/** Same metrics, every key prefixed (e.g. `test/` for evaluation). */
export function prefixMetrics(prefix: string, metrics: Metrics): Metrics {
  const out: Metrics = {};
  for (const [k, v] of Object.entries(metrics)) out[`${prefix}${k}`] = v;
  return out;
}
