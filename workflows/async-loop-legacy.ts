// The async loop as it was before pacing and the publish-first fix (async-loop.ts), kept unchanged so that runs
// started before them replay (workflows started then take this path; patched() in training-run.ts decides).
// Its rule is 'resample', and it frees a step's slots before the new policy is published (the race #21 fixed).
//
// The async off-policy loop (the tinker-cookbook's do_async_training, made durable). Groups of rollouts are
// sampled all the time, each under the policy that was newest when it started; the trainer never waits for the
// slowest rollout of a batch, only for the first groupsPerBatch groups recent enough to train (async-scheduler.ts
// decides which). Each step:
//   [runEvaluation every evalEvery] → wait for a batch of groups → trainStep → publishPolicy (no drain: rollouts
//   in flight keep sampling from the policy they started with) → start groups on the freed slots
//   → saveCheckpoint (every saveEvery) → logMetrics
// Every decision is made here, in workflow code, from activity results in history, so replay and recovery
// reproduce which groups made each step. Groups in flight across continue-as-new are picked up again by their
// idempotency keys; a stop cancels them.
import { CancellationScope, condition, isCancellation, log, setCurrentDetails } from '@temporalio/workflow';
import type { TraceEvent } from '../activities/types';
import { AsyncScheduler, groupKey, initialSchedulerState, stalenessOf, type FinishedGroup, type SchedulerCounts, type StartedGroup } from './async-scheduler';
import type { RunControl } from './run-control';
import { checkpointName } from './run-control';
import type { AsyncCarried, CollectedBatch, Metrics } from '../shared/run-types';
import { evaluate, type LoopContext } from './sync-loop';

/** The trainStep input for a batch of finished groups. */
function collectedBatch(batch: FinishedGroup[]): CollectedBatch {
  const counts = { succeeded: 0, failed: 0, cancelled: 0, other: 0 };
  for (const g of batch) {
    for (const s of g.statuses) {
      if (s === 'succeeded' || s === 'failed' || s === 'cancelled') counts[s]++;
      else counts.other++;
    }
  }
  return { groups: batch.map((g) => ({ key: groupKey(g), taskIndex: g.taskIndex, rolloutIds: g.rolloutIds, statuses: g.statuses })), counts };
}

export async function asyncLoopLegacy(run: RunControl, ctx: LoopContext, totalGroups: number, carried: AsyncCarried | undefined): Promise<{ stoppedEarly: boolean; counts: SchedulerCounts }> {
  const { bookkeeping, trainer, rollouts } = ctx.stubs;
  const { maxStepsOffPolicy, groupsPerBatch } = run.settings().async!;
  const asyncSettings = { maxStepsOffPolicy, groupsPerBatch, staleRule: 'resample' as const };
  const sched = new AsyncScheduler(asyncSettings, carried?.scheduler ?? initialSchedulerState(totalGroups));
  let evaluatedStep = carried?.evaluatedStep ?? null;
  let fatal: unknown = null;
  // Rollout activities run here, so a stop can cancel the ones still sampling.
  const sampling = new CancellationScope();

  const showProgress = () => {
    const s = sched.state;
    run.asyncProgress = {
      ...asyncSettings,
      inFlight: s.inFlight.length,
      finished: s.finished.length,
      requeued: s.requeued.length,
      ...s.counts,
    };
    setCurrentDetails(run.currentDetails());
  };

  const launch = (group: StartedGroup) => {
    const settings = run.settings();
    sampling.run(() => rollouts.collectGroup(settings, group, ctx.datasetSha256)).then(
      (result) => {
        if (!sched.finish(group, result, run.policy!.step)) return;
        fill();
      },
      (err: unknown) => {
        if (!isCancellation(err)) fatal ??= err;
      },
    );
  };

  let trainResources = '';
  /** Starts groups on the free slots under the newest policy (not while paused or stopping). */
  const fill = () => {
    if (!run.paused && !run.stopRequested && trainResources) for (const g of sched.startGroups(run.policy!.step, trainResources)) launch(g);
    showProgress();
  };

  // A continued run picks up the groups its previous segment had in flight (the store has their rollouts).
  for (const g of sched.state.inFlight) launch(g);
  run.setPhase('publishing policy');
  trainResources = await bookkeeping.publishPolicy(run.settings(), run.policy!.step, 'train', run.policy!);

  const traceEvents: TraceEvent[] = [];
  let before: SchedulerCounts = { ...sched.state.counts };
  let windowStart = Date.now();
  let stoppedEarly = false;
  for (;; run.batch++) {
    if (run.paused) {
      run.setPhase('paused');
      await condition(() => !run.paused);
    }
    if (run.stopRequested) {
      stoppedEarly = true;
      break;
    }
    if (fatal) throw fatal;
    const settings = run.settings();
    const trace = settings.enableTrace ? traceEvents : null;
    traceEvents.length = 0;
    const step = run.batch;
    const policy = run.policy!;
    run.batchStartedAtMs = windowStart;
    const metrics: Metrics = {
      'progress/batch': step,
      'optim/lr': settings.learningRate,
      'progress/done_frac': Math.min(1, (step + 1) / run.numBatches),
    };

    if (settings.evalEvery > 0 && step % settings.evalEvery === 0 && evaluatedStep !== step) {
      await evaluate(run, ctx, settings, step, policy, metrics, trace);
      evaluatedStep = step;
    }

    fill();
    run.setPhase('waiting for groups');
    const waitStart = Date.now();
    await condition(() => sched.readyOrDone(policy.step) || run.paused || run.stopRequested || fatal !== null);
    if (fatal) throw fatal;
    if (run.stopRequested) {
      stoppedEarly = true;
      break;
    }
    if (run.paused) {
      run.batch--; // the same step again once resumed
      continue;
    }
    const batch = sched.takeBatch(policy.step);
    if (!batch) break; // every group is trained, dropped or failed: the data is used up
    metrics['async/time_waiting_for_groups'] = (Date.now() - waitStart) / 1000;

    run.setPhase('training');
    const stepResult = await run.timed('train', () => trainer.trainStep(settings, step, collectedBatch(batch), policy), metrics, trace);
    Object.assign(metrics, stepResult.metrics);
    run.policy = stepResult.state;
    sched.trained(run.policy.step);

    run.setPhase('publishing policy');
    trainResources = await bookkeeping.publishPolicy(settings, run.policy.step, 'train', run.policy);
    fill();

    if (settings.saveEvery > 0 && (step + 1) % settings.saveEvery === 0) {
      run.setPhase('checkpointing');
      await run.timed('record_checkpoint', () => bookkeeping.saveCheckpoint(settings, checkpointName(step + 1), step + 1, run.policy!, false), metrics, trace);
    }

    const staleness = stalenessOf(batch, policy.step);
    const now = sched.state.counts;
    Object.assign(metrics, {
      'async/staleness_mean': staleness.mean,
      'async/staleness_max': staleness.max,
      'async/staleness_min': staleness.min,
      'async/groups_trained': batch.length,
      'async/groups_stale_resampled': now.resampled - before.resampled,
      'async/groups_dropped_stale': now.droppedStale - before.droppedStale,
      'async/groups_failed': now.failed - before.failed,
      'async/groups_in_flight': sched.state.inFlight.length,
    });
    before = { ...now };
    const total = (Date.now() - windowStart) / 1000;
    metrics['time/total'] = total;
    // The trainer works only inside trainStep: the rest of the step's wall time it waits (groups, evaluation, bookkeeping).
    metrics['async/trainer_idle_frac'] = total > 0 ? Math.max(0, 1 - (metrics['time/train'] ?? 0) / total) : 0;
    run.setPhase('logging');
    await bookkeeping.logMetrics(settings, step, metrics, settings.enableTrace ? [...traceEvents] : []);
    run.stepDone(metrics, stepResult.skipReason);
    windowStart = Date.now();

    await run.maybeContinueAsNew(ctx.config, !sched.exhausted(), () => {
      // The next run picks its groups up by their keys; these attempts would only finish into a closed run.
      sampling.cancel();
      return { async: { scheduler: sched.state, evaluatedStep } };
    });
  }
  if (sched.state.inFlight.length > 0) log.info('cancelling groups still sampling', { groups: sched.state.inFlight.map(groupKey) });
  sampling.cancel();
  showProgress();
  const c = sched.state.counts;
  log.info('async sampling done', { ...c, steps: run.batch });
  return { stoppedEarly, counts: { ...c } };
}
