// The async off-policy loop (the tinker-cookbook's do_async_training with PR #822's pacing, made durable). Groups
// of rollouts are sampled all the time, each under the policy the proxy serves it; the trainer never waits for
// the slowest rollout of a batch, only for the groups async-scheduler.ts says the next step needs. Each step:
//   [runEvaluation every evalEvery] → wait for a batch of groups → trainStep → publishPolicy (no drain: rollouts
//   in flight keep sampling from the policy they started with) → only then free the step's slots and start groups
//   under the new policy → saveCheckpoint (every saveEvery) → logMetrics
// The policy groups start under and the resources they carry change together, once the new policy is published:
// a group finishing during the publish starts its successors under the policy still served, labelled so.
// Every decision is made here, in workflow code, from activity results in history, so replay and recovery
// reproduce which groups made each step. Groups in flight across continue-as-new are picked up again by their
// idempotency keys; a stop cancels them, and their rollouts still queued in the store.
//
// Runs started before pacing and the publish-first fix (patch ASYNC_PACED, training-run.ts: `paced` false) keep the
// loop they started with, which differs at the lines marked `!paced`: rule 'resample' (no pipelineDepth, no cap on
// groups sampling), a step's slots freed and new groups labelled with the new policy before it is published (the
// race #21 fixed), a pause while waiting takes the step again from the top, no final evaluation once the data is
// used up, and groups still sampling at the end only cancelled in Temporal (not in the store, not on a failure).
import { CancellationScope, condition, ContinueAsNew, isCancellation, log, setCurrentDetails } from '@temporalio/workflow';
import type { TraceEvent } from '../activities/types';
import { AsyncScheduler, groupKey, initialSchedulerState, stalenessOf, type AsyncSettings, type FinishedGroup, type SchedulerCounts, type StartedGroup } from './async-scheduler';
import type { RunControl } from './run-control';
import { checkpointName } from './run-control';
import type { AsyncCarried, CollectedBatch, Metrics, RunSettings } from '../shared/run-types';
import { evaluate, type LoopContext } from './sync-loop';

/** The trainStep input for a batch of finished groups; each names the policy step it was started under. */
function collectedBatch(batch: FinishedGroup[]): CollectedBatch {
  const counts = { succeeded: 0, failed: 0, cancelled: 0, other: 0 };
  for (const g of batch) {
    for (const s of g.statuses) {
      if (s === 'succeeded' || s === 'failed' || s === 'cancelled') counts[s]++;
      else counts.other++;
    }
  }
  return {
    groups: batch.map((g) => ({ key: groupKey(g), taskIndex: g.taskIndex, rolloutIds: g.rolloutIds, statuses: g.statuses, policyStep: g.policyStep })),
    counts,
  };
}

/** The scheduler's settings for a run: its async config, and its concurrency as groups sampling at once. */
export function schedulerSettings(settings: RunSettings, paced = true): AsyncSettings {
  const a = settings.async!;
  if (!paced) return { maxStepsOffPolicy: a.maxStepsOffPolicy, groupsPerBatch: a.groupsPerBatch, staleRule: 'resample' };
  return {
    maxStepsOffPolicy: a.maxStepsOffPolicy,
    groupsPerBatch: a.groupsPerBatch,
    pipelineDepth: a.pipelineDepth ?? null,
    staleRule: a.staleRule ?? 'pace',
    maxGroupsSampling: Math.max(1, Math.floor(settings.concurrency / settings.datasetBuilder.groupSize)),
  };
}

/** `paced`: patched(ASYNC_PACED), false for runs started before pacing (see the top of this file). */
export async function asyncLoop(run: RunControl, ctx: LoopContext, totalGroups: number, carried: AsyncCarried | undefined, paced: boolean): Promise<{ stoppedEarly: boolean; counts: SchedulerCounts }> {
  const { bookkeeping, trainer, rollouts } = ctx.stubs;
  const asyncSettings = schedulerSettings(run.settings(), paced);
  const sched = new AsyncScheduler(asyncSettings, carried?.scheduler ?? initialSchedulerState(totalGroups));
  let evaluatedStep = carried?.evaluatedStep ?? null;
  let fatal: unknown = null;
  // Rollout activities run here, so a stop can cancel the ones still sampling.
  const sampling = new CancellationScope();
  /** The policy groups start under, with the resources that serve it: replaced together, after a publish. */
  let serving: { step: number; resourcesId: string } | null = null;

  const showProgress = () => {
    const s = sched.state;
    run.asyncProgress = {
      maxStepsOffPolicy: asyncSettings.maxStepsOffPolicy,
      groupsPerBatch: asyncSettings.groupsPerBatch,
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
        if (!sched.finish(group, result, paced ? (serving?.step ?? run.policy!.step) : run.policy!.step)) return;
        fill();
      },
      (err: unknown) => {
        if (!isCancellation(err)) fatal ??= err;
      },
    );
  };

  /** Starts groups on the free slots under the policy served now (not while paused or stopping). */
  const fill = () => {
    if (!run.paused && !run.stopRequested && serving) for (const g of sched.startGroups(paced ? serving.step : run.policy!.step, serving.resourcesId)) launch(g);
    showProgress();
  };

  // Progress shows the async state from the start (a run continued while paused waits before any fill).
  showProgress();
  // A continued run picks up the groups its previous segment had in flight (the store has their rollouts).
  for (const g of sched.state.inFlight) launch(g);
  run.setPhase('publishing policy');
  serving = { step: run.policy!.step, resourcesId: await bookkeeping.publishPolicy(run.settings(), run.policy!.step, 'train', run.policy!) };

  const traceEvents: TraceEvent[] = [];
  let before: SchedulerCounts = { ...sched.state.counts };
  let windowStart = Date.now();
  /** Time paused within the current step's window: neither the step's time nor the trainer's idle time. */
  let pausedMs = 0;
  const waitWhilePaused = async () => {
    const t0 = Date.now();
    run.setPhase('paused');
    await condition(() => !run.paused || run.stopRequested);
    pausedMs += Date.now() - t0;
  };
  let stoppedEarly = false;
  /** Cancels the groups still sampling, in Temporal and in the store (runners would still take their rollouts). */
  const cancelSampling = async () => {
    const unwanted = sched.state.inFlight.map(groupKey);
    sampling.cancel();
    if (unwanted.length === 0) return;
    log.info('cancelling groups still sampling', { groups: unwanted });
    if (!paced) return;
    // Not cut by a stop's grace (it is quick), nor by the scope a failure or the grace cancels.
    await CancellationScope.nonCancellable(() => bookkeeping.cancelGroups(run.settings(), unwanted)).catch((err: unknown) =>
      log.warn('could not cancel the rollouts of groups still sampling: runners may still take them', { run: run.runName, groups: unwanted, error: String(err) }),
    );
  };
  const runSteps = async () => {
    for (;; run.batch++) {
      if (run.paused) await waitWhilePaused();
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
        'progress/step': step,
        'progress/batch': step,
        'optim/lr': settings.learningRate,
        'progress/done_frac': Math.min(1, (step + 1) / run.numBatches),
      };

      if (settings.evalEvery > 0 && step % settings.evalEvery === 0 && evaluatedStep !== step) {
        await evaluate(run, ctx, settings, step, policy, metrics, trace);
        evaluatedStep = step;
      }

      fill();
      // A pause while waiting keeps this step (and its evaluation metrics): the wait resumes after it.
      let waitedMs = 0;
      for (;;) {
        run.setPhase('waiting for groups');
        const waitStart = Date.now();
        await condition(() => sched.readyOrDone(policy.step) || run.paused || run.stopRequested || fatal !== null);
        waitedMs += Date.now() - waitStart;
        if (paced && run.paused && !run.stopRequested && fatal === null) {
          await waitWhilePaused();
          fill();
          continue;
        }
        break;
      }
      if (fatal) throw fatal;
      if (run.stopRequested) {
        stoppedEarly = true;
        break;
      }
      if (!paced && run.paused) {
        run.batch--; // the same step again, from the top, once resumed
        continue;
      }
      const batch = sched.takeBatch(policy.step);
      if (!batch) {
        if (!paced) break;
        // Every group is trained or failed: the data is used up. The final policy is evaluated (as the cookbook
        // does at the end) and that evaluation logged as the row after the last step.
        if (settings.evalEvery > 0 && evaluatedStep !== step) {
          await evaluate(run, ctx, settings, step, policy, metrics, trace);
          evaluatedStep = step;
        }
        if (Object.keys(metrics).some((k) => k.startsWith('test/'))) {
          run.setPhase('logging');
          await bookkeeping.logMetrics(settings, step, { ...metrics, 'progress/done_frac': 1 }, settings.enableTrace ? [...traceEvents] : []);
        }
        break;
      }
      metrics['async/time_waiting_for_groups'] = waitedMs / 1000;

      run.setPhase('training');
      const stepResult = await run.timed('train', () => trainer.trainStep(settings, step, collectedBatch(batch), policy), metrics, trace);
      Object.assign(metrics, stepResult.metrics);
      run.policy = stepResult.state;
      if (!paced) sched.trained(run.policy.step);

      // Until the publish returns the proxy serves the old policy: groups finishing meanwhile start under it, on slots
      // other than this step's, which are freed only once the new policy serves.
      run.setPhase('publishing policy');
      const resourcesId = await bookkeeping.publishPolicy(settings, run.policy.step, 'train', run.policy);
      serving = { step: run.policy.step, resourcesId };
      if (paced) sched.trained(run.policy.step);
      fill();

      if (settings.saveEvery > 0 && (step + 1) % settings.saveEvery === 0) {
        run.setPhase('checkpointing');
        await run.timed('record_checkpoint', () => bookkeeping.saveCheckpoint(settings, checkpointName(step + 1), step + 1, run.policy!, false), metrics, trace);
      }

      // async/staleness_* come from trainStep: read from the spans, the policy that served each group. The labels
      // are the cross-check (trainStep counts disagreements as async/groups_mislabelled).
      const labelled = stalenessOf(batch, policy.step);
      const now = sched.state.counts;
      Object.assign(metrics, {
        'async/staleness_labelled_max': labelled.max,
        'async/groups_trained': batch.length,
        'async/groups_stale_resampled': now.resampled - before.resampled,
        'async/groups_dropped_stale': now.droppedStale - before.droppedStale,
        'async/groups_failed': now.failed - before.failed,
        'async/groups_constant_reward': (now.constantReward ?? 0) - (before.constantReward ?? 0),
        'async/groups_in_flight': sched.state.inFlight.length,
      });
      before = { ...now };
      const total = Math.max(0, Date.now() - windowStart - pausedMs) / 1000;
      metrics['time/total'] = total;
      if (pausedMs > 0) metrics['time/paused'] = pausedMs / 1000;
      // The trainer works only inside trainStep: the rest of the step's wall time (not paused) it waits.
      metrics['async/trainer_idle_frac'] = total > 0 ? Math.max(0, 1 - (metrics['time/train'] ?? 0) / total) : 0;
      run.setPhase('logging');
      const disk = await bookkeeping.logMetrics(settings, step, metrics, settings.enableTrace ? [...traceEvents] : []);
      run.stepDone(metrics, stepResult.skipReason, disk);
      windowStart = Date.now();
      pausedMs = 0;

      await run.maybeContinueAsNew(ctx.config, !sched.exhausted(), () => {
        // The next run picks its groups up by their keys; these attempts would only finish into a closed run.
        sampling.cancel();
        return { async: { scheduler: sched.state, evaluatedStep } };
      });
    }
  };
  try {
    await runSteps();
  } catch (err) {
    // Continue-as-new hands the groups in flight to the next run; a failure or a stop cut short ends them.
    if (paced && !(err instanceof ContinueAsNew)) await cancelSampling();
    throw err;
  }
  await cancelSampling();
  showProgress();
  const c = sched.state.counts;
  log.info('async sampling done', { ...c, steps: run.batch });
  return { stoppedEarly, counts: { ...c } };
}
