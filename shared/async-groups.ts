// The vocabulary of an async run's groups (pure types and rules, no I/O): the settings, a group as it is started,
// finished and counted, and the scheduler's state the workflow carries across continue-as-new. Shared by the
// scheduler (workflows/async-scheduler.ts), the activities that sample a group and the run's own types.

export type StaleRule = 'pace' | 'resample' | 'late';

export interface AsyncSettings {
  maxStepsOffPolicy: number;
  groupsPerBatch: number;
  /** How many steps sampling may run ahead of training ('pace'; default min(1, maxStepsOffPolicy)). */
  pipelineDepth?: number | null;
  /** Default 'pace'. */
  staleRule?: StaleRule;
  /** At most this many groups sampling at once (the run's concurrency / groupSize); unset = no cap but the slots. */
  maxGroupsSampling?: number;
}

export const staleRuleOf = (s: AsyncSettings): StaleRule => s.staleRule ?? 'pace';
export const pipelineDepthOf = (s: AsyncSettings): number => s.pipelineDepth ?? Math.min(1, s.maxStepsOffPolicy);

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
  /** Every rollout got the same reward and removeConstantRewardGroups is on: never trained, slot freed. */
  constantReward?: number;
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
