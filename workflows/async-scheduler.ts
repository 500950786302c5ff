// Which groups the async loop samples, and which of them make each training step (pure; no I/O, no Temporal).
// Staleness of a group = the step that trains it minus the policy step it sampled from; it never exceeds K
// (maxStepsOffPolicy). Two rules keep it so:
// - 'pace' (the default; tinker-cookbook PR #822): no group is ever discarded for staleness. Sampling runs at most
//   pipelineDepth steps ahead (groupsPerBatch × (pipelineDepth + 1) groups started and not yet trained), and a
//   group is started only if every group, it included, can still be trained within K steps of its policy (each
//   step trains groupsPerBatch, stalest first). A step takes the stalest finished groups, and waits while taking
//   them would leave a group (finished or still sampling) unable to meet its deadline. So a slow task is trained
//   late but trained, and sampling pauses rather than produce what could not be trained in time.
// - 'resample' (the cookbook before 0.6, and this project before pacing): at most groupsPerBatch × (K + 1) groups
//   started and untrained; a step trains groupsPerBatch finished groups at most K behind, oldest first; a group
//   that finished too stale is sampled again under the newest policy, at most MAX_RESAMPLES times, then dropped.
//   It biases training toward fast tasks (#822): kept as an explicit option for comparison.
// - 'late' (tinker-cookbook 0.6.1's released do_async_training): at most groupsPerBatch × (K + 1) groups started and
//   untrained, every finished group trained, stalest first, and a step never waits for a group still sampling. K
//   then bounds staleness only while sampling keeps up: a group that comes in later than K steps is trained as it
//   is (its staleness, read from the spans, shows it). Nothing discarded, no step held back by one straggler.
// Either way a group none of whose rollouts succeeded (or, with removeConstantRewardGroups, whose rewards are all
// equal) frees its slot and is counted. `maxGroupsSampling` caps groups sampling at once (the run's concurrency).
// The state is plain data, so the workflow carries it across continue-as-new.

import { MAX_RESAMPLES, groupKey, pipelineDepthOf, staleRuleOf, type AsyncSettings, type FinishedGroup, type GroupRef, type SchedulerCounts, type SchedulerState, type StaleRule, type StartedGroup } from '../shared/async-groups';

export { MAX_RESAMPLES, groupKey, pipelineDepthOf, staleRuleOf };
export type { AsyncSettings, FinishedGroup, GroupRef, SchedulerCounts, SchedulerState, StaleRule, StartedGroup };

/** Groups started and not yet trained, at most. */
export const capacity = (s: AsyncSettings) => s.groupsPerBatch * ((staleRuleOf(s) === 'pace' ? pipelineDepthOf(s) : s.maxStepsOffPolicy) + 1);

/** Stalest first: the oldest policy, then the order they finished. */
const stalestFirst = (a: FinishedGroup, b: FinishedGroup) => a.policyStep - b.policyStep || a.order - b.order;

/**
 * Can every group still meet its deadline (policy step + K) when steps from `firstStep` on train `perStep` groups
 * each, stalest first? `policySteps` are the groups' policy steps.
 */
export function deadlinesMet(policySteps: number[], k: number, perStep: number, firstStep: number): boolean {
  if (policySteps.length === 0) return true;
  const deadlines = policySteps.map((p) => p + k).sort((a, b) => a - b);
  // Checking at each deadline suffices: the count of groups due by d only grows at deadlines.
  for (let i = 0; i < deadlines.length; i++) {
    const d = deadlines[i]!;
    if (i + 1 < deadlines.length && deadlines[i + 1] === d) continue;
    if (i + 1 > perStep * (d - firstStep + 1)) return false;
  }
  return true;
}

export function initialSchedulerState(totalGroups: number): SchedulerState {
  return {
    totalGroups,
    nextGroup: 0,
    requeued: [],
    inFlight: [],
    finished: [],
    training: [],
    finishedSoFar: 0,
    counts: { started: 0, trained: 0, resampled: 0, droppedStale: 0, failed: 0, constantReward: 0 },
  };
}

export class AsyncScheduler {
  constructor(
    readonly settings: AsyncSettings,
    readonly state: SchedulerState,
  ) {}

  /** Slots held by no group started and not yet trained. */
  freeSlots(): number {
    const s = this.state;
    return capacity(this.settings) - s.inFlight.length - s.finished.length - s.training.length;
  }

  /** Something is left to start: a task never sampled or one sent back. */
  hasWork(): boolean {
    return this.state.requeued.length > 0 || this.state.nextGroup < this.state.totalGroups;
  }

  /** Nothing left to sample, wait for or train. */
  exhausted(): boolean {
    const s = this.state;
    return !this.hasWork() && s.inFlight.length === 0 && s.finished.length === 0 && s.training.length === 0;
  }

  /** The next step whose groups are not yet taken (while a step trains, the one after it). */
  private nextStepToTake(policyStep: number): number {
    return this.state.training.length > 0 ? policyStep + 1 : policyStep;
  }

  /** 'pace': may one more group start under `policyStep` without any group missing its deadline? */
  private paceAllows(policyStep: number): boolean {
    const k = this.settings.maxStepsOffPolicy;
    const first = this.nextStepToTake(policyStep);
    if (policyStep + k < first) return false;
    const untaken = [...this.state.inFlight, ...this.state.finished].map((g) => g.policyStep);
    return deadlinesMet([...untaken, policyStep], k, this.settings.groupsPerBatch, first);
  }

  private mayStart(policyStep: number): boolean {
    if (this.freeSlots() <= 0 || !this.hasWork()) return false;
    const cap = this.settings.maxGroupsSampling;
    if (cap !== undefined && this.state.inFlight.length >= Math.max(1, cap)) return false;
    return staleRuleOf(this.settings) !== 'pace' || this.paceAllows(policyStep);
  }

  /** Takes free slots for the groups to start now under `policyStep`, sent-back tasks first. */
  startGroups(policyStep: number, resourcesId: string): StartedGroup[] {
    const started: StartedGroup[] = [];
    while (this.mayStart(policyStep)) {
      const ref = this.state.requeued.shift() ?? { g: this.state.nextGroup++, r: 0 };
      const group: StartedGroup = { ...ref, policyStep, resourcesId };
      this.state.inFlight.push(group);
      started.push(group);
    }
    this.state.counts.started += started.length;
    return started;
  }

  /**
   * Records a finished group (any status mix). Returns false when it was not in flight (a duplicate or a result
   * from before continue-as-new): such results are ignored, so no group is counted twice.
   */
  finish(ref: GroupRef, result: { taskIndex: number; rolloutIds: string[]; statuses: string[]; constantReward?: boolean }, currentStep: number): boolean {
    const i = this.state.inFlight.findIndex((x) => x.g === ref.g && x.r === ref.r);
    if (i < 0) return false;
    const [group] = this.state.inFlight.splice(i, 1);
    if (!result.statuses.includes('succeeded')) {
      this.state.counts.failed++;
      return true;
    }
    if (result.constantReward) {
      this.state.counts.constantReward = (this.state.counts.constantReward ?? 0) + 1;
      return true;
    }
    const { constantReward: _c, ...kept } = result;
    this.state.finished.push({ ...group!, ...kept, order: this.state.finishedSoFar++ });
    if (staleRuleOf(this.settings) === 'resample') this.sendBackStale(currentStep);
    return true;
  }

  /** Finished groups too stale for a step from `currentStep`: sent back (or dropped). Returns how many. */
  sendBackStale(currentStep: number): number {
    if (staleRuleOf(this.settings) !== 'resample') return 0;
    const k = this.settings.maxStepsOffPolicy;
    const stale = this.state.finished.filter((f) => currentStep - f.policyStep > k);
    if (stale.length === 0) return 0;
    this.state.finished = this.state.finished.filter((f) => currentStep - f.policyStep <= k);
    for (const f of stale) {
      if (f.r < MAX_RESAMPLES) {
        this.state.requeued.push({ g: f.g, r: f.r + 1 });
        this.state.counts.resampled++;
      } else {
        this.state.counts.droppedStale++;
      }
    }
    return stale.length;
  }

  /** Finished groups a step from `currentStep` may train, in the order it takes them. */
  private eligible(currentStep: number): FinishedGroup[] {
    const k = this.settings.maxStepsOffPolicy;
    const resample = staleRuleOf(this.settings) === 'resample';
    return this.state.finished.filter((f) => !resample || currentStep - f.policyStep <= k).sort(stalestFirst);
  }

  /** The groups the step from `currentStep` would train now, or null while it must wait. */
  private nextBatch(currentStep: number): FinishedGroup[] | null {
    const n = this.settings.groupsPerBatch;
    const batch = this.eligible(currentStep).slice(0, n);
    const last = !this.hasWork() && this.state.inFlight.length === 0;
    if (batch.length === 0 || (batch.length < n && !last)) return null;
    if (last || staleRuleOf(this.settings) !== 'pace') return batch;
    // 'pace': the stalest groups that could ever be taken (none still sampling is older)...
    const newest = Math.max(...batch.map((b) => b.policyStep));
    if (this.state.inFlight.every((g) => g.policyStep >= newest)) return batch;
    // ...or, with older groups still sampling, only if they can all still be trained in time without this step.
    const taken = new Set(batch.map((b) => b.order));
    const rest = [...this.state.inFlight, ...this.state.finished.filter((f) => !taken.has(f.order))].map((g) => g.policyStep);
    return deadlinesMet(rest, this.settings.maxStepsOffPolicy, n, currentStep + 1) ? batch : null;
  }

  /** A full step is ready, or the data is used up and what is left makes a final one. */
  batchReady(currentStep: number): boolean {
    return this.nextBatch(currentStep) !== null;
  }

  /** Also true when nothing more can ever be trained (the loop then ends). */
  readyOrDone(currentStep: number): boolean {
    return this.batchReady(currentStep) || this.exhausted();
  }

  /**
   * The groups of the step from `currentStep`, removed from `finished` (their slots stay taken until `trained`
   * frees them, as the cookbook frees slots only after the step). Null when no step is ready.
   */
  takeBatch(currentStep: number): FinishedGroup[] | null {
    this.sendBackStale(currentStep);
    const batch = this.nextBatch(currentStep);
    if (!batch) return null;
    const taken = new Set(batch.map((b) => b.order));
    this.state.finished = this.state.finished.filter((f) => !taken.has(f.order));
    this.state.training = batch;
    return batch;
  }

  /** Call when the step of `takeBatch` is applied: frees its slots; groups now too stale are sent back. */
  trained(newPolicyStep: number): void {
    this.state.counts.trained += this.state.training.length;
    this.state.training = [];
    this.sendBackStale(newPolicyStep);
  }
}

/** staleness = the step being trained minus the policy step each group sampled from. */
export function stalenessOf(batch: FinishedGroup[], currentStep: number): { mean: number; max: number; min: number } {
  const s = batch.map((b) => currentStep - b.policyStep);
  return { mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length), max: Math.max(...s, 0), min: s.length ? Math.min(...s) : 0 };
}
