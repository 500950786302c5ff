// Async runs: how stale each trained group really was, from what served it. A group's served policy step is the
// oldest policy step any of its calls' spans recorded (agl.policy.step): a group is as stale as its stalest turn.
// The workflow's label (the step it started the group under) is the cross-check: they must agree.
import type { Metrics } from './types';

export interface GroupProvenance {
  /** The oldest policy step that served any turn of the group; null when no span named one. */
  served: number | null;
  /** The policy step the workflow started the group under, when it says. */
  label?: number;
}

/** The oldest step among the spans' policy steps, or null when none carries one. */
export function oldestServedStep(steps: Iterable<unknown>): number | null {
  let oldest: number | null = null;
  for (const s of steps) if (typeof s === 'number' && Number.isInteger(s) && s >= 0 && (oldest === null || s < oldest)) oldest = s;
  return oldest;
}

/**
 * async/staleness_{mean,max,min} of a step that updates policy `trainedStep`, from the served steps; groups whose
 * label disagrees (async/groups_mislabelled), groups no span told about (async/groups_served_unknown) and, given the
 * run's bound, groups staler than it (async/groups_past_bound: 0 unless the run's rule trains stragglers late).
 */
export function servedStalenessMetrics(trainedStep: number, groups: GroupProvenance[], bound?: number): { metrics: Metrics; mislabelled: string[] } {
  const known = groups.filter((g): g is { served: number; label?: number } => g.served !== null);
  const staleness = known.map((g) => trainedStep - g.served);
  const mislabelled = groups.flatMap((g, i) => (g.label !== undefined && g.served !== null && g.label !== g.served ? [`group ${i}: labelled ${g.label}, served by ${g.served}`] : []));
  const metrics: Metrics = {
    'async/groups_mislabelled': mislabelled.length,
    'async/groups_served_unknown': groups.length - known.length,
  };
  if (bound !== undefined) metrics['async/groups_past_bound'] = staleness.filter((x) => x > bound).length;
  if (staleness.length > 0) {
    metrics['async/staleness_mean'] = staleness.reduce((a, b) => a + b, 0) / staleness.length;
    metrics['async/staleness_max'] = Math.max(...staleness);
    metrics['async/staleness_min'] = Math.min(...staleness);
  }
  return { metrics, mislabelled };
}
