// What the async loop hands the trainer for a step, and the async/* and time/* metrics of its row (pure; the loop
// in async-loop.ts decides when, this file only computes).
import { groupKey, stalenessOf, type FinishedGroup, type SchedulerCounts } from './async-scheduler';
import type { CollectedBatch, Metrics } from '../shared/run-types';

/** The trainStep input for a step's finished groups; each names the policy step it was started under. */
export function collectedBatch(groups: FinishedGroup[]): CollectedBatch {
  const counts = { succeeded: 0, failed: 0, cancelled: 0, other: 0 };
  for (const g of groups) {
    for (const s of g.statuses) {
      if (s === 'succeeded' || s === 'failed' || s === 'cancelled') counts[s]++;
      else counts.other++;
    }
  }
  return {
    groups: groups.map((g) => ({ key: groupKey(g), taskIndex: g.taskIndex, rolloutIds: g.rolloutIds, statuses: g.statuses, policyStep: g.policyStep })),
    counts,
  };
}

/** The row's first metrics, before the step's evaluation and training add theirs. */
export function stepStartMetrics(step: number, learningRate: number, numSteps: number): Metrics {
  return {
    'progress/step': step,
    'progress/batch': step,
    'optim/lr': learningRate,
    'progress/done_frac': Math.min(1, (step + 1) / numSteps),
  };
}

/** The sampler's side of a trained step: its groups, and what the scheduler counted since the last row. */
export function groupMetrics(groups: FinishedGroup[], policyStep: number, before: SchedulerCounts, now: SchedulerCounts, inFlight: number): Metrics {
  // async/staleness_* come from trainStep: read from the spans, the policy that served each group. The labels are
  // the cross-check (trainStep counts disagreements as async/groups_mislabelled).
  return {
    'async/staleness_labelled_max': stalenessOf(groups, policyStep).max,
    'async/groups_trained': groups.length,
    'async/groups_stale_resampled': now.resampled - before.resampled,
    'async/groups_dropped_stale': now.droppedStale - before.droppedStale,
    'async/groups_failed': now.failed - before.failed,
    'async/groups_constant_reward': (now.constantReward ?? 0) - (before.constantReward ?? 0),
    'async/groups_in_flight': inFlight,
  };
}

/**
 * A step's wall time from the last row to this one, less the time paused, and the trainer's share of it idle: it
 * works only inside trainStep (`time/train`), and waits the rest.
 */
export function windowMetrics(elapsedMs: number, pausedMs: number, trainSeconds: number | undefined): Metrics {
  const total = Math.max(0, elapsedMs - pausedMs) / 1000;
  return {
    'time/total': total,
    ...(pausedMs > 0 ? { 'time/paused': pausedMs / 1000 } : {}),
    'async/trainer_idle_frac': total > 0 ? Math.max(0, 1 - (trainSeconds ?? 0) / total) : 0,
  };
}
