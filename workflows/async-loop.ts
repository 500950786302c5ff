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
// The loop is one object: `run` reads top to bottom, `steps` is one step's phases in order, and what they share is
// the record in `state`. Groups sample beside the steps (`launch`, `fill`); a failed one rejects the step's wait
// (group-failure.ts). Recorded histories replay through this code (test/workflows/replay.test.ts), so a phase is a
// method only where that adds no await between an activity's result and the commands that follow it: the steps
// await the same promises in the same order as the code that wrote those histories.
//
// Runs started before pacing and the publish-first fix (patch ASYNC_PACED, training-run.ts: `paced` false) keep the
// loop they started with, which differs at the lines marked `!paced`: rule 'resample' (no pipelineDepth, no cap on
// groups sampling), a step's slots freed and new groups labelled with the new policy before it is published (the
// race the publish-first order fixed), a pause while waiting takes the step again from the top, no final evaluation
// once the data is used up, and groups still sampling at the end only cancelled in Temporal (not in the store, not
// on a failure).
import { CancellationScope, ContinueAsNew, condition, log, setCurrentDetails } from '@temporalio/workflow';
import type { TraceEvent } from '../activities/types';
import { AsyncScheduler, groupKey, initialSchedulerState, type AsyncSettings, type FinishedGroup, type SchedulerCounts, type StartedGroup } from './async-scheduler';
import { collectedBatch, groupMetrics, stepStartMetrics, windowMetrics } from './async-step-metrics';
import { GroupFailure } from './group-failure';
import { checkpointName, type RunControl } from './run-control';
import type { AsyncCarried, Metrics, PolicyState, RunSettings } from '../shared/run-types';
import { evaluate, type LoopContext } from './sync-loop';

export interface AsyncLoopResult {
  stoppedEarly: boolean;
  counts: SchedulerCounts;
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

/** What the loop's phases share, beside the scheduler's own state (which continue-as-new carries). */
interface AsyncLoopState {
  /** The policy groups start under, with the resources that serve it: replaced together, after a publish. */
  serving: { step: number; resourcesId: string } | null;
  /** The last step whose policy was evaluated (carried across continue-as-new, so no step is evaluated twice). */
  evaluatedStep: number | null;
  /** The scheduler's counts when the last row was logged: a row's async/groups_* are what changed since. */
  countsBefore: SchedulerCounts;
  /** When the step's window opened (the last row), and the time paused within it: neither the step's time nor idle. */
  windowStart: number;
  pausedMs: number;
  /** The trace events of the step in progress (enableTrace). */
  traceEvents: TraceEvent[];
  stoppedEarly: boolean;
}

/** `paced`: patched(ASYNC_PACED), false for runs started before pacing (see the top of this file). */
export function asyncLoop(run: RunControl, ctx: LoopContext, totalGroups: number, carried: AsyncCarried | undefined, paced: boolean): Promise<AsyncLoopResult> {
  return new AsyncLoop(run, ctx, totalGroups, carried, paced).run();
}

class AsyncLoop {
  private readonly settings: AsyncSettings;
  private readonly sched: AsyncScheduler;
  /** Rollout activities run here, so a stop can cancel the ones still sampling. */
  private readonly sampling = new CancellationScope();
  private readonly failure = new GroupFailure();
  private readonly state: AsyncLoopState;

  constructor(
    private readonly control: RunControl,
    private readonly ctx: LoopContext,
    totalGroups: number,
    carried: AsyncCarried | undefined,
    private readonly paced: boolean,
  ) {
    this.settings = schedulerSettings(control.settings(), paced);
    this.sched = new AsyncScheduler(this.settings, carried?.scheduler ?? initialSchedulerState(totalGroups));
    this.state = { serving: null, evaluatedStep: carried?.evaluatedStep ?? null, countsBefore: this.sched.state.counts, windowStart: 0, pausedMs: 0, traceEvents: [], stoppedEarly: false };
  }

  async run(): Promise<AsyncLoopResult> {
    const { control: run, state } = this;
    // Progress shows the async state from the start (a run continued while paused waits before any fill).
    this.showProgress();
    // A continued run picks up the groups its previous segment had in flight (the store has their rollouts).
    for (const g of this.sched.state.inFlight) this.launch(g);
    run.setPhase('publishing policy');
    state.serving = { step: run.policy!.step, resourcesId: await this.ctx.stubs.bookkeeping.publishPolicy(run.settings(), run.policy!.step, 'train', run.policy!) };
    state.countsBefore = { ...this.sched.state.counts };
    state.windowStart = Date.now();
    try {
      await this.steps();
    } catch (err) {
      // Continue-as-new hands the groups in flight to the next run; a failure or a stop cut short ends them.
      if (this.paced && !(err instanceof ContinueAsNew)) await this.cancelSampling();
      throw err;
    }
    await this.cancelSampling();
    this.showProgress();
    const c = this.sched.state.counts;
    log.info('async sampling done', { ...c, steps: run.step });
    return { stoppedEarly: state.stoppedEarly, counts: { ...c } };
  }

  /** The steps until the data is used up or a stop: each one's phases, in order. */
  private async steps(): Promise<void> {
    const { control: run, state, ctx } = this;
    const { bookkeeping, trainer } = ctx.stubs;
    for (;; run.step++) {
      if (run.paused) await this.waitWhilePaused();
      if (run.stopRequested) return this.stopEarly();
      this.failure.throwIfFailed();
      const settings = run.settings();
      const { step, trace, metrics } = this.openStep(settings);
      const policy = run.policy!;

      if (this.evaluationDue(settings, step)) {
        await evaluate(run, ctx, settings, step, policy, metrics, trace);
        state.evaluatedStep = step;
      }

      this.fill();
      const waitedMs = await this.waitForGroups(policy.step);
      if (run.stopRequested) return this.stopEarly();
      if (!this.paced && run.paused) {
        run.step--; // the same step again, from the top, once resumed
        continue;
      }
      const groups = this.sched.takeBatch(policy.step);
      if (!groups) {
        if (this.paced) await this.finishUsedUp(settings, step, policy, metrics, trace);
        return;
      }
      metrics['async/time_waiting_for_groups'] = waitedMs / 1000;

      run.setPhase('training');
      const trained = await run.timed('train', () => trainer.trainStep(settings, step, collectedBatch(groups), policy), metrics, trace);
      this.adoptTrained(trained.state, trained.metrics, metrics);

      // Until the publish returns the proxy serves the old policy: groups finishing meanwhile start under it, on slots
      // other than this step's, which are freed only once the new policy serves.
      run.setPhase('publishing policy');
      const resourcesId = await bookkeeping.publishPolicy(settings, run.policy!.step, 'train', run.policy!);
      this.serve(resourcesId);

      if (settings.saveEvery > 0 && (step + 1) % settings.saveEvery === 0) await this.saveCheckpoint(settings, step, metrics, trace);

      this.closeStep(metrics, groups, policy.step);
      run.setPhase('logging');
      const disk = await bookkeeping.logMetrics(settings, step, metrics, settings.enableTrace ? [...state.traceEvents] : []);
      run.stepDone(metrics, trained.skipReason, disk);
      state.windowStart = Date.now();
      state.pausedMs = 0;

      await run.maybeContinueAsNew(ctx.config, !this.sched.exhausted(), () => this.carried());
    }
  }

  /** The step now starting: its number, its trace (enableTrace), the first metrics of its row. */
  private openStep(settings: RunSettings): { step: number; trace: TraceEvent[] | null; metrics: Metrics } {
    const run = this.control;
    const trace = settings.enableTrace ? this.state.traceEvents : null;
    this.state.traceEvents.length = 0;
    run.stepStartedAtMs = this.state.windowStart;
    return { step: run.step, trace, metrics: stepStartMetrics(run.step, settings.learningRate, run.numSteps) };
  }

  private evaluationDue(settings: RunSettings, step: number): boolean {
    return settings.evalEvery > 0 && step % settings.evalEvery === 0 && this.state.evaluatedStep !== step;
  }

  /** Waits for the step's groups, and returns how long; rejects once a group failed. */
  private async waitForGroups(policyStep: number): Promise<number> {
    const run = this.control;
    // A pause while waiting keeps this step (and its evaluation metrics): the wait resumes after it.
    let waitedMs = 0;
    for (;;) {
      run.setPhase('waiting for groups');
      const waitStart = Date.now();
      await this.failure.until(() => this.sched.readyOrDone(policyStep) || run.paused || run.stopRequested);
      waitedMs += Date.now() - waitStart;
      if (!(this.paced && run.paused && !run.stopRequested)) return waitedMs;
      await this.waitWhilePaused();
      this.fill();
    }
  }

  /** The trained policy becomes the run's (a run before pacing frees the step's slots now, before the publish). */
  private adoptTrained(policy: PolicyState, trainMetrics: Metrics, metrics: Metrics): void {
    Object.assign(metrics, trainMetrics);
    this.control.policy = policy;
    if (!this.paced) this.sched.trained(policy.step);
  }

  /** The new policy serves: groups start under it from now on, on the slots the step frees. */
  private serve(resourcesId: string): void {
    const policy = this.control.policy!;
    this.state.serving = { step: policy.step, resourcesId };
    if (this.paced) this.sched.trained(policy.step);
    this.fill();
  }

  private saveCheckpoint(settings: RunSettings, step: number, metrics: Metrics, trace: TraceEvent[] | null): Promise<string> {
    const run = this.control;
    run.setPhase('checkpointing');
    return run.timed('record_checkpoint', () => this.ctx.stubs.bookkeeping.saveCheckpoint(settings, checkpointName(step + 1), step + 1, run.policy!, false), metrics, trace);
  }

  /** The row's async/* and time/* metrics, once the step is trained (and checkpointed). */
  private closeStep(metrics: Metrics, groups: FinishedGroup[], policyStep: number): void {
    const { state, sched } = this;
    const now = sched.state.counts;
    Object.assign(metrics, groupMetrics(groups, policyStep, state.countsBefore, now, sched.state.inFlight.length));
    state.countsBefore = { ...now };
    Object.assign(metrics, windowMetrics(Date.now() - state.windowStart, state.pausedMs, metrics['time/train']));
  }

  /**
   * Every group is trained or failed: the data is used up. The final policy is evaluated (as the cookbook does at
   * the end) and that evaluation logged as the row after the last step.
   */
  private async finishUsedUp(settings: RunSettings, step: number, policy: PolicyState, metrics: Metrics, trace: TraceEvent[] | null): Promise<void> {
    const run = this.control;
    if (settings.evalEvery > 0 && this.state.evaluatedStep !== step) {
      await evaluate(run, this.ctx, settings, step, policy, metrics, trace);
      this.state.evaluatedStep = step;
    }
    if (Object.keys(metrics).some((k) => k.startsWith('test/'))) {
      run.setPhase('logging');
      await this.ctx.stubs.bookkeeping.logMetrics(settings, step, { ...metrics, 'progress/done_frac': 1 }, settings.enableTrace ? [...this.state.traceEvents] : []);
    }
  }

  private stopEarly(): void {
    this.state.stoppedEarly = true;
  }

  /** What the next run of the chain picks up: the scheduler's state (its groups by their keys). */
  private carried() {
    // These attempts would only finish into a closed run.
    this.sampling.cancel();
    return { async: { scheduler: this.sched.state, evaluatedStep: this.state.evaluatedStep } };
  }

  /** Samples a group beside the steps: its result frees a slot (and starts the next), a failure ends the run. */
  private launch(group: StartedGroup): void {
    const settings = this.control.settings();
    this.sampling.run(() => this.ctx.stubs.rollouts.collectGroup(settings, group, this.ctx.datasetSha256)).then(
      (result) => {
        const policyStep = this.paced ? (this.state.serving?.step ?? this.control.policy!.step) : this.control.policy!.step;
        if (!this.sched.finish(group, result, policyStep)) return;
        this.fill();
      },
      (err: unknown) => this.failure.record(err),
    );
  }

  /** Starts groups on the free slots under the policy served now (not while paused or stopping). */
  private fill(): void {
    const { control: run, state } = this;
    if (!run.paused && !run.stopRequested && state.serving) {
      for (const g of this.sched.startGroups(this.paced ? state.serving.step : run.policy!.step, state.serving.resourcesId)) this.launch(g);
    }
    this.showProgress();
  }

  private showProgress(): void {
    const s = this.sched.state;
    this.control.asyncProgress = {
      maxStepsOffPolicy: this.settings.maxStepsOffPolicy,
      groupsPerBatch: this.settings.groupsPerBatch,
      inFlight: s.inFlight.length,
      finished: s.finished.length,
      requeued: s.requeued.length,
      ...s.counts,
    };
    setCurrentDetails(this.control.currentDetails());
  }

  private async waitWhilePaused(): Promise<void> {
    const run = this.control;
    const t0 = Date.now();
    run.setPhase('paused');
    await condition(() => !run.paused || run.stopRequested);
    this.state.pausedMs += Date.now() - t0;
  }

  /** Cancels the groups still sampling, in Temporal and in the store (runners would still take their rollouts). */
  private async cancelSampling(): Promise<void> {
    const unwanted = this.sched.state.inFlight.map(groupKey);
    this.sampling.cancel();
    if (unwanted.length === 0) return;
    log.info('cancelling groups still sampling', { groups: unwanted });
    if (!this.paced) return;
    // Not cut by a stop's grace (it is quick), nor by the scope a failure or the grace cancels.
    await CancellationScope.nonCancellable(() => this.ctx.stubs.bookkeeping.cancelGroups(this.control.settings(), unwanted)).catch((err: unknown) =>
      log.warn('could not cancel the rollouts of groups still sampling: runners may still take them', { run: this.control.runName, groups: unwanted, error: String(err) }),
    );
  }
}
