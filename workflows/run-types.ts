// Plain data shared by the training workflow, its activities and the client. Kept small: everything here
// travels through Temporal history.
import type { RunChanges } from '../config/run-changes';
import type { RunConfig, RunConfigInput } from '../config/run-config';

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

/** The rollouts of one batch, in task order: one group per task, groupSize rollouts each. */
export interface CollectedBatch {
  groups: CollectedGroup[];
  counts: { succeeded: number; failed: number; cancelled: number; other: number };
}

export interface CollectedGroup {
  taskIndex: number;
  rolloutIds: string[];
  /** Final status of each rollout (the store's RolloutStatus). */
  statuses: string[];
}

export interface TrainStepResult {
  state: PolicyState;
  metrics: Metrics;
  /** True when the batch gave nothing to train on (all empty or all dropped): weights unchanged. */
  skipped: boolean;
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
}
