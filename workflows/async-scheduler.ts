// Which groups the async loop samples, and which of them make each training step (pure; no I/O, no Temporal).
// The rules are the tinker-cookbook's AsyncConfig with one change that keeps staleness bounded:
// - at most groupsPerBatch × (maxStepsOffPolicy + 1) groups are started and not yet trained (a group holds its
//   slot from start until it is trained, failed or sent back), so sampling runs at most maxStepsOffPolicy steps
//   ahead of training;
// - a step trains groupsPerBatch finished groups whose policy is at most maxStepsOffPolicy steps behind, the oldest
//   policy first, then in the order they finished; when the data is used up the rest make a final, smaller step;
// - a group that finished too stale is not trained: its task is sampled again under the newest policy (the cookbook
//   did this before 0.6; 0.6.1 trains such groups anyway, which breaks the bound), at most MAX_RESAMPLES times,
//   after which it is dropped and counted. A group none of whose rollouts succeeded frees its slot and is counted.
// The state is plain data, so the workflow carries it across continue-as-new.

export interface AsyncSettings {
  maxStepsOffPolicy: number;
  groupsPerBatch: number;
}

/** How many times one task is sampled again after its group came back too stale. */
export const MAX_RESAMPLES = 3;

/** A task of the dataset (group index g in dataset order) and how many times it was sampled before. */
export interface GroupRef {
  g: number;
  r: number;
}

export interface StartedGroup extends GroupRef {
  /** Optimizer steps of the policy it samples from. */
  policyStep: number;
  /** The store resources its rollouts carry (the policy they sample from). */
  resourcesId: string;
}

export interface FinishedGroup extends StartedGroup {
  taskIndex: number;
  rolloutIds: string[];
  statuses: string[];
  /** Position in the order groups finished (ties broken by it). */
  order: number;
}

export interface SchedulerCounts {
  started: number;
  trained: number;
  /** Finished too stale and sent back to be sampled again. */
  resampled: number;
  /** Too stale MAX_RESAMPLES + 1 times: never trained. */
  droppedStale: number;
  /** No rollout of the group succeeded: never trained. */
  failed: number;
}

export interface SchedulerState {
  totalGroups: number;
  /** Next dataset group never started. */
  nextGroup: number;
  /** Groups to sample again (too stale), first in first out. */
  requeued: GroupRef[];
  inFlight: StartedGroup[];
  finished: FinishedGroup[];
  /** The groups of the step being trained: they hold their slots until it is applied. */
  training: FinishedGroup[];
  finishedSoFar: number;
  counts: SchedulerCounts;
}

export const groupKey = (ref: GroupRef) => `g${ref.g}r${ref.r}`;

export const capacity = (s: AsyncSettings) => s.groupsPerBatch * (s.maxStepsOffPolicy + 1);

export function initialSchedulerState(totalGroups: number): SchedulerState {
  return {
    totalGroups,
    nextGroup: 0,
    requeued: [],
    inFlight: [],
    finished: [],
    training: [],
    finishedSoFar: 0,
    counts: { started: 0, trained: 0, resampled: 0, droppedStale: 0, failed: 0 },
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

  /** Takes free slots for the groups to start now under `policyStep`, sent-back tasks first. */
  startGroups(policyStep: number, resourcesId: string): StartedGroup[] {
    const started: StartedGroup[] = [];
    while (this.freeSlots() > 0 && this.hasWork()) {
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
  finish(ref: GroupRef, result: { taskIndex: number; rolloutIds: string[]; statuses: string[] }, currentStep: number): boolean {
    const i = this.state.inFlight.findIndex((x) => x.g === ref.g && x.r === ref.r);
    if (i < 0) return false;
    const [group] = this.state.inFlight.splice(i, 1);
    if (!result.statuses.includes('succeeded')) {
      this.state.counts.failed++;
      return true;
    }
    this.state.finished.push({ ...group!, ...result, order: this.state.finishedSoFar++ });
    this.sendBackStale(currentStep);
    return true;
  }

  /** Finished groups too stale for a step from `currentStep`: sent back (or dropped). Returns how many. */
  sendBackStale(currentStep: number): number {
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
    return this.state.finished
      .filter((f) => currentStep - f.policyStep <= k)
      .sort((a, b) => a.policyStep - b.policyStep || a.order - b.order);
  }

  /** A full step is ready, or the data is used up and what is left makes a final one. */
  batchReady(currentStep: number): boolean {
    const n = this.eligible(currentStep).length;
    if (n >= this.settings.groupsPerBatch) return true;
    return n > 0 && !this.hasWork() && this.state.inFlight.length === 0;
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
    if (!this.batchReady(currentStep)) return null;
    const batch = this.eligible(currentStep).slice(0, this.settings.groupsPerBatch);
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
