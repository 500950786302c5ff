// A sweep: one run config trained over a grid of settings and seeds, as child workflows that are ordinary
// training runs (each can be watched, paused, stopped or forked on its own), with successive halving at
// milestones. No scheduler beside Temporal: this workflow is the whole of it, and its state is its history.
//
// - Children are `trainingRun` workflows named from the sweep's name, config index and seed index
//   (shared/sweep-plan.ts), started up to `maxParallel` at a time. They carry the search attribute AglSweep and a
//   memo with their grid values. ParentClosePolicy ABANDON: a terminated or failed sweep leaves its runs going
//   (TERMINATE would kill runs mid-step without a final checkpoint; the training run takes no cancellation as a
//   stop); `client stop` stops each cleanly.
// - A milestone m is the eval of the policy after m steps, in the child's metrics row of step m. An activity reads
//   that row from the store (sweep-watch.ts): it survives a crash of the worker, of the child or of this workflow,
//   and adds one activity per child and milestone to history, whatever the run's length.
// - A child holds itself after its row of m (its config's `pauseBeforeBatches`: a pause the run makes itself, so
//   no race with a signal and no step past the milestone, even while this workflow's worker is down); held, it
//   frees its slot until every child still alive has reached m. Then the better half goes on (resumed as slots free) and
//   the worse half gets the ordinary `stop` (a final checkpoint). A child that ends early (stopped by hand, failed,
//   or shorter than the milestone) is left out of later milestones.
// - A resume signal Temporal reports failed is tried again (patched sweep-resume-retried; before it, the failure was
//   dropped and the child stayed held while counted running): a child that ended meanwhile is left to its result; one
//   still not resumed after RESUME_TRIES is marked failed with the reason (sweep-status shows it) and frees its slot.
// - The result ranks every child by its last eval reward, as `client report` ranks runs.
//
// The sweep is one object: `run` reads top to bottom (fill the slots, take the children's news, decide a milestone),
// its phases are methods over the record in `state`, which the sweepProgress query returns as it stands.
import { CancellationScope, condition, defineQuery, getExternalWorkflowHandle, isCancellation, log, ParentClosePolicy, patched, proxyActivities, setHandler, startChild, upsertSearchAttributes, type ChildWorkflowHandle } from '@temporalio/workflow';
import type { SweepActivities } from '../activities/sweep-watch';
import { resumeSignal } from './messages';
import type { TrainingRunResult, TrainingRunWorkflow } from '../shared/run-types';
import { SWEEP } from '../shared/search-attributes';
import { halve, rankByEval, sweepChildren, type MilestoneDecision, type SweepChild, type SweepInput, type SweepResult } from '../shared/sweep-plan';

export const sweepProgressQuery = defineQuery<SweepResult>('sweepProgress');

/** A failed resume signal is tried again and reported (before: dropped). */
export const SWEEP_RESUME_RETRIED = 'sweep-resume-retried';
/** Tries of a resume signal, 1, 2, 4 and 8 seconds apart (a failure Temporal reports is rarely passing). */
export const RESUME_TRIES = 5;

/** An error's messages down its causes ("Activity task failed: learningRate: ..."), each once. */
const reasonOf = (err: unknown): string => {
  const out: string[] = [];
  for (let e = err as { message?: string; cause?: unknown } | undefined; e && out.length < 5; e = e.cause as typeof e) {
    if (e.message && !out.includes(e.message)) out.push(e.message);
  }
  return out.join(': ') || String(err);
};

// Waiting for a milestone may take as long as the child's steps; it heartbeats, so a dead worker is noticed.
const watch = proxyActivities<SweepActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
const quick = proxyActivities<SweepActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

type SweepEvent =
  | { kind: 'reached'; i: number; milestone: number; score: number | null }
  | { kind: 'ended'; i: number; result?: TrainingRunResult; error?: string };

/** What the sweep's phases share; `children`, `decisions` and `ranking` are what the query and the result show. */
interface SweepState {
  children: SweepChild[];
  decisions: MilestoneDecision[];
  ranking: string[];
  /** Per child: its run key in the store (name@first run id), once started. */
  runKeys: string[];
  /** Per child: the index of the next milestone it has to reach. */
  nextMilestone: number[];
  /** Children whose workflow has closed (set as its result comes in, before its event is handled). */
  closed: Set<number>;
  /** What the children's results and milestone watches said, not yet handled. */
  events: SweepEvent[];
  /** Survivors of a milestone waiting for a slot, in order. */
  resumeQueue: number[];
  /** The next child never started. */
  nextToStart: number;
}

export function sweep(input: SweepInput): Promise<SweepResult> {
  return new Sweep(input).run();
}

const ended = (s: SweepChild['status']) => s === 'completed' || s === 'stopped' || s === 'failed';

class Sweep {
  private readonly plans: ReturnType<typeof sweepChildren>;
  private readonly milestones: number[];
  private readonly state: SweepState;
  /** Per child: the scope of its milestone watch, cancelled when it ends. */
  private readonly watches = new Map<number, CancellationScope>();

  constructor(private readonly input: SweepInput) {
    this.plans = sweepChildren(input);
    this.milestones = input.milestones;
    const children: SweepChild[] = this.plans.map((p) => ({ runName: p.runName, workflowId: p.workflowId, assignment: p.assignment, seed: p.seed, status: 'waiting', milestoneScores: {} }));
    this.state = { children, decisions: [], ranking: [], runKeys: this.plans.map(() => ''), nextMilestone: this.plans.map(() => 0), closed: new Set(), events: [], resumeQueue: [], nextToStart: 0 };
    setHandler(sweepProgressQuery, this.result);
    upsertSearchAttributes([{ key: SWEEP, value: input.name }]);
  }

  async run(): Promise<SweepResult> {
    const { state } = this;
    while (true) {
      await this.fillSlots();
      if (state.nextToStart >= this.plans.length && state.children.every((c) => ended(c.status))) break;
      await condition(() => state.events.length > 0);
      while (state.events.length > 0) this.handle(state.events.shift()!);
      await this.decide();
    }
    const scores = await quick.sweepFinalScores({ storeAddress: this.input.base.storeAddress, runKeys: state.runKeys.filter((k) => k) });
    this.rank(scores);
    return this.result();
  }

  /** The sweep as it stands: the progress query's answer, and at the end the result. */
  private readonly result = (): SweepResult => {
    const { children, decisions, ranking } = this.state;
    return { name: this.input.name, children, milestones: decisions, ranking };
  };

  private running(): number {
    return this.state.children.filter((c) => c.status === 'running').length;
  }

  /** Starts or resumes children while slots are free: survivors of a milestone first, then children never started. */
  private async fillSlots(): Promise<void> {
    const { state } = this;
    while (this.running() < this.input.maxParallel) {
      const i = state.resumeQueue.shift();
      if (i !== undefined) {
        if (state.children[i]!.status !== 'queued') continue;
        state.children[i]!.status = 'running';
        if (await this.resume(i)) this.watchMilestone(i);
      } else if (state.nextToStart < this.plans.length) await this.start(state.nextToStart++);
      else return;
    }
  }

  private async start(i: number): Promise<void> {
    const { input, state } = this;
    const plan = this.plans[i]!;
    let handle: ChildWorkflowHandle<TrainingRunWorkflow>;
    try {
      handle = await startChild<TrainingRunWorkflow>('trainingRun', {
        workflowId: plan.workflowId,
        taskQueue: input.taskQueue,
        args: [{ config: plan.config }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        typedSearchAttributes: [{ key: SWEEP, value: input.name }],
        memo: { sweep: input.name, sweepAssignment: plan.assignment, seed: plan.seed },
        staticSummary: `sweep ${input.name}: ${JSON.stringify(plan.assignment)} seed ${plan.seed}`,
      });
    } catch (err) {
      state.children[i]!.status = 'failed';
      state.children[i]!.error = `could not start: ${reasonOf(err)}`;
      log.warn('sweep: a run could not be started', { run: plan.runName, error: reasonOf(err) });
      return;
    }
    state.runKeys[i] = `${plan.runName}@${handle.firstExecutionRunId}`;
    state.children[i]!.status = 'running';
    handle.result().then(
      (r) => {
        state.closed.add(i);
        state.events.push({ kind: 'ended', i, result: r });
      },
      (err: Error) => {
        state.closed.add(i);
        // Past the child's own failure to the reason (the activity's, a termination's).
        state.events.push({ kind: 'ended', i, error: reasonOf(err.cause ?? err) });
      },
    );
    this.watchMilestone(i);
  }

  /** Watches for the child's next milestone row (none past the last milestone). */
  private watchMilestone(i: number): void {
    const { state } = this;
    const m = state.nextMilestone[i]!;
    if (m >= this.milestones.length) return;
    const scope = new CancellationScope();
    this.watches.set(i, scope);
    scope
      .run(() => watch.sweepWaitForEval({ storeAddress: this.input.base.storeAddress, workflowId: state.children[i]!.workflowId, runKey: state.runKeys[i]!, step: this.milestones[m]! }))
      .then(
        (score) => state.events.push({ kind: 'reached', i, milestone: m, score }),
        (err) => {
          if (!isCancellation(err)) log.warn('sweep: waiting for a milestone failed', { run: state.children[i]!.runName, error: reasonOf(err) });
        },
      );
  }

  /** Resumes a held child; false when it could not be (it ended meanwhile, or every try failed: marked failed). */
  private async resume(i: number): Promise<boolean> {
    const { state } = this;
    const child = state.children[i]!;
    for (let attempt = 1; ; attempt++) {
      try {
        await getExternalWorkflowHandle(child.workflowId).signal(resumeSignal);
        return true;
      } catch (err) {
        // Sweeps started before this change went on as if the signal had arrived.
        if (!patched(SWEEP_RESUME_RETRIED)) return true;
        const reason = reasonOf(err);
        if (state.closed.has(i)) {
          log.info('sweep: a held run ended before it was resumed', { run: child.runName, error: reason });
          return false;
        }
        if (attempt >= RESUME_TRIES) {
          log.error('sweep: a held run could not be resumed; the sweep goes on without it', { run: child.runName, attempts: attempt, error: reason });
          child.status = 'failed';
          child.error = `held at its milestone and not resumed after ${attempt} tries (${reason}): resume it (client resume) or stop it`;
          return false;
        }
        log.warn('sweep: resuming a held run failed; trying again', { run: child.runName, attempt, error: reason });
        // The child's result, if it has ended, comes in meanwhile.
        await condition(() => state.closed.has(i), `${2 ** (attempt - 1)} seconds`);
      }
    }
  }

  /** A child ended (its result in), or reached its milestone: then it holds itself there. */
  private handle(ev: SweepEvent): void {
    const child = this.state.children[ev.i]!;
    if (ev.kind === 'ended') {
      this.watches.get(ev.i)?.cancel();
      child.batchesCompleted = ev.result?.batchesCompleted;
      child.status = ev.error !== undefined ? 'failed' : ev.result?.stoppedEarly ? 'stopped' : 'completed';
      if (ev.error !== undefined) child.error = ev.error;
    } else if (child.status === 'running') {
      child.milestoneScores[String(this.milestones[ev.milestone])] = ev.score;
      // The child holds itself before its next batch (pauseBeforeBatches), so it never runs past the milestone.
      child.status = 'held';
    }
  }

  /** Decides the milestone once every child still alive is held there: the worse half stopped, the better queued. */
  private async decide(): Promise<void> {
    const { state, input } = this;
    const alive = state.children.map((c, i) => ({ c, i })).filter(({ c }) => !ended(c.status) && c.status !== 'stopping');
    if (alive.length === 0 || state.nextToStart < this.plans.length) return;
    const m = state.nextMilestone[alive[0]!.i]!;
    if (!alive.every(({ c, i }) => c.status === 'held' && state.nextMilestone[i] === m)) return;
    const step = this.milestones[m]!;
    const { keep, stop } = halve(alive.map(({ c, i }) => ({ index: i, score: c.milestoneScores[String(step)] ?? null })));
    state.decisions.push({ step, kept: keep.map((i) => state.children[i]!.runName), stopped: stop.map((i) => state.children[i]!.runName) });
    log.info('sweep: milestone decided', { step, kept: state.decisions.at(-1)!.kept, stopped: state.decisions.at(-1)!.stopped });
    for (const i of stop) {
      state.children[i]!.status = 'stopping';
      state.children[i]!.stoppedAtMilestone = step;
    }
    await Promise.all(stop.map((i) => quick.sweepStopRun({ workflowId: state.children[i]!.workflowId, reason: `sweep ${input.name}: worse half at milestone ${step}` })));
    for (const i of keep) {
      state.nextMilestone[i] = m + 1;
      state.children[i]!.status = 'queued';
      state.resumeQueue.push(i);
    }
  }

  /** Every started child's last eval reward, and the ranking by it. */
  private rank(scores: Awaited<ReturnType<SweepActivities['sweepFinalScores']>>): void {
    const { state } = this;
    let s = 0;
    state.children.forEach((c, i) => {
      if (!state.runKeys[i]) return;
      const { lastEvalReward, lastEvalStep } = scores[s++]!;
      Object.assign(c, { lastEvalReward, lastEvalStep });
    });
    state.ranking = rankByEval(state.children.map((c, i) => ({ index: i, score: c.lastEvalReward ?? null }))).map((i) => state.children[i]!.runName);
  }
}
