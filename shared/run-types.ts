// Plain data shared by the training workflow, its activities and the client. Kept small: everything here
// travels through Temporal history.
import type { RunChanges } from '../config/run-changes';
import type { RunConfig, RunConfigInput } from '../config/run-config';
import type { SchedulerCounts, SchedulerState } from './async-groups';

/** The run config minus inline datasets (those are snapshotted to disk once by prepareRun). */
export type RunSettings = Omit<RunConfig, 'datasetBuilder'> & {
  runName: string;
  /**
   * Names this execution chain of the run (its first run id): the prefix of every idempotency key, so retries and
   * continue-as-new find what the run made, while a fresh run of the same name never picks up an old run's rollouts.
   */
  instanceId?: string;
  datasetBuilder: Omit<RunConfig['datasetBuilder'], 'trainDataset' | 'valDataset'>;
};

export type Metrics = Record<string, number>;

export type Phase =
  | 'starting'
  | 'publishing policy'
  | 'evaluating'
  | 'collecting rollouts'
  | 'waiting for groups'
  | 'training'
  | 'checkpointing'
  | 'logging'
  | 'paused'
  | 'saving final checkpoint'
  | 'done'
  | 'stopped';

/** What one step of the policy needs to be found again: on the trainer, by path. */
export interface PolicyState {
  /** The trainer's model id; a retried activity reattaches to it, or recreates it from statePath. */
  modelId: string;
  /** `tinker://.../weights/<name>`: weights + optimizer state after `step` optimizer steps. */
  statePath: string;
  /** `tinker://.../sampler_weights/<name>`: what the proxy samples from. */
  samplerPath: string;
  /** Number of batches whose optimizer steps this state includes. */
  step: number;
}

/**
 * The rollouts of one batch, in task order: one group per task, groupSize rollouts each. A synchronous batch names
 * them by `ref` (their idempotency-key prefix in the store), so nothing in history grows with the batch; an async
 * step lists its few groups. Histories written before `ref` existed carry `groups`; both are read.
 */
export interface CollectedBatch {
  groups?: CollectedGroup[];
  ref?: BatchRef;
  counts: { succeeded: number; failed: number; cancelled: number; other: number };
}

/** Where a batch's rollouts are in the store: keys `${keyPrefix}${group}/${member}`. */
export interface BatchRef {
  keyPrefix: string;
  numGroups: number;
  groupSize: number;
}

export interface CollectedGroup {
  /** Async runs: the group's key (dataset group and sample count, e.g. g12r0), recorded with the step. */
  key?: string;
  taskIndex: number;
  rolloutIds: string[];
  /** Final status of each rollout (the store's RolloutStatus). */
  statuses: string[];
  /** Async runs: the policy step the group was started under (checked against the spans by trainStep). */
  policyStep?: number;
}

export interface TrainStepResult {
  state: PolicyState;
  metrics: Metrics;
  /** True when the batch gave nothing to train on (all empty or all dropped): weights unchanged. */
  skipped: boolean;
  /** Why a skipped batch was skipped (shown by progress and the UI). */
  skipReason?: string;
}

/** Carried across continue-as-new. */
export interface CarriedState {
  nextBatch: number;
  policy: PolicyState;
  paused: boolean;
  lastMetrics: Metrics;
  startedAtMs: number;
  /** Settings changed by `configure` updates, applied over the config. */
  changes?: RunChanges;
  /** Async runs: the scheduler (groups in flight are picked up again by their idempotency keys). */
  async?: AsyncCarried;
  /** Steps in a row without rewards, and the current warning (reward-watch.ts). */
  rewardWatch?: RewardWatchState;
  /** Why the run paused itself, until resumed. */
  pauseReason?: string;
  /** Disk use as last read, so a run paused across continue-as-new still shows it. */
  disk?: DiskUse;
}

export interface AsyncCarried {
  scheduler: SchedulerState;
  /** The step whose evaluation already ran (so a continued run does not evaluate it twice). */
  evaluatedStep: number | null;
}

/** What an async run's sampler side is doing, for progress and the UI. */
export interface AsyncProgress {
  maxStepsOffPolicy: number;
  groupsPerBatch: number;
  inFlight: number;
  finished: number;
  requeued: number;
  started: number;
  trained: number;
  resampled: number;
  droppedStale: number;
  failed: number;
}

/** What collectGroup returns: the group's rollouts and how each ended. */
export interface GroupResult {
  taskIndex: number;
  rolloutIds: string[];
  statuses: string[];
  /** removeConstantRewardGroups: every rollout got the same reward, so the group is not trained. */
  constantReward?: boolean;
}

export interface TrainingRunInput {
  /** The run config as written (validated by the first activity). */
  config: RunConfigInput;
  carried?: CarriedState;
}

export interface TrainingRunResult {
  runName: string;
  /** Batches whose training step is done (across continue-as-new). */
  batchesCompleted: number;
  numBatches: number;
  finalCheckpoint: string | null;
  stoppedEarly: boolean;
  lastMetrics: Metrics;
  /** Async runs: groups started, trained, sent back as stale, dropped as stale, failed (whole run). */
  asyncCounts?: SchedulerCounts;
}

/** Disk use behind a run as last read after a step's metrics (a part that could not be read is absent). */
export interface DiskUse {
  atStep: number;
  /** The store's database and write-ahead log. */
  store?: { bytes: number };
  /** The local trainer's data directory, and the room left on its volume. */
  trainer?: { bytes: number; volumeFreeBytes: number };
}

export interface Progress {
  runName: string;
  batch: number;
  numBatches: number;
  phase: Phase;
  paused: boolean;
  stopRequested: boolean;
  lastMetrics: Metrics;
  policyStep: number;
  startedAtMs: number;
  /** Workflow time when the current batch started (ms since epoch). */
  batchStartedAtMs: number;
  /** Mean seconds per completed batch in this run so far. */
  secondsPerBatch: number | null;
  /** Settings changed by `configure` updates (in force from the next batch to start). */
  changes: RunChanges;
  /** Async runs only: groups sampling, waiting, trained, sent back. */
  async?: AsyncProgress;
  /** Rollouts without rewards or a skipped batch in the last step, with the likely causes. */
  warning?: string;
  /** Why the run paused itself (e.g. no rewards for a few batches); `resume` clears it. */
  pauseReason?: string;
  /** Disk use as read after the last step (absent before the first, and in runs of older workflow code). */
  disk?: DiskUse;
}

/** The checkpoints.jsonl row a `checkpoint` update recorded. */
export interface CheckpointSaved {
  name: string;
  /** Batches whose optimizer steps the checkpoint includes. */
  batch: number;
  statePath: string;
  samplerPath: string;
}

/** What a `configure` update changed, and from which batch. */
export interface ConfigureResult {
  appliesFromBatch: number;
  /** All changes in force from then on (this update's and earlier ones). */
  changes: RunChanges;
}

export interface StopRequest {
  reason?: string;
  /** How long the batch in flight may take to finish before it is cancelled (default 300 s; a run starting stops at once). */
  graceSeconds?: number;
}

/** What the run's reward watch (workflows/reward-watch.ts) carries across continue-as-new. */
export interface RewardWatchState {
  /** Steps in a row whose succeeded rollouts carried no reward. */
  batchesWithoutReward: number;
  warning: string | null;
}

/** The training workflow's signature, for continue-as-new without importing the workflow itself. */
export type TrainingRunWorkflow = (input: TrainingRunInput | RunConfigInput) => Promise<TrainingRunResult>;
