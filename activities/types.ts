// The activity signatures the training workflow calls. Workflow code imports this file for types only.
import type { CollectedBatch, DiskUse, GroupResult, Metrics, PolicyState, RunSettings, TrainStepResult } from '../shared/run-types';
import type { StartedGroup } from '../shared/async-groups';
import type { RunConfigInput } from '../config/run-config';

export interface PreparedRun {
  /** The validated config with defaults applied, minus inline datasets. */
  settings: RunSettings;
  numBatches: number;
  numValTasks: number;
  /** sha256 of the dataset snapshot, so later activities know they read the same tasks. */
  datasetSha256: string;
  note?: string;
}

export interface TrainingActivities {
  /** Validates the config, reads the datasets once and snapshots them to <logPath>/dataset.json. */
  prepareRun(config: RunConfigInput): Promise<PreparedRun>;
  /** Creates the trained model (or loads loadCheckpointPath) and saves step 0's state and sampler. */
  initPolicy(settings: RunSettings, startStep: number): Promise<PolicyState>;
  /** Points the proxy at a sampler and records the resources rollouts will use. Returns the resources id. */
  publishPolicy(settings: RunSettings, batch: number, purpose: 'train' | 'eval', policy: PolicyState): Promise<string>;
  /** The validation set through the store (group size 1, eval temperature); returns `test/...` metrics. */
  runEvaluation(settings: RunSettings, batch: number, resourcesId: string, datasetSha256: string): Promise<Metrics>;
  /** Enqueues the batch's rollouts (idempotently), waits for them, returns their ids grouped in task order. */
  collectRollouts(settings: RunSettings, batch: number, resourcesId: string, datasetSha256: string): Promise<CollectedBatch>;
  /**
   * Async runs: one group (groupSize rollouts of one task) under the resources it was started with; enqueued
   * idempotently by the group's key, so a retry or a continued run finds its rollouts. Waits until all end.
   */
  collectGroup(settings: RunSettings, group: StartedGroup, datasetSha256: string): Promise<GroupResult>;
  /** Async runs, on stop: cancels in the store the rollouts still queued or running of these groups (keys). */
  cancelGroups(settings: RunSettings, keys: string[]): Promise<number>;
  /** Spans → datums → forward_backward/optim_step, applied exactly once; returns the next policy. */
  trainStep(settings: RunSettings, batch: number, collected: CollectedBatch, policy: PolicyState): Promise<TrainStepResult>;
  /** Records a checkpoint row in checkpoints.jsonl (once per name). */
  saveCheckpoint(settings: RunSettings, name: string, batch: number, policy: PolicyState, final: boolean): Promise<string>;
  /** One row per step in metrics.jsonl (a retried step replaces nothing), plus trace events when enabled. */
  /** Returns the disk use behind the run (undefined in histories from before it did). */
  logMetrics(settings: RunSettings, step: number, metrics: Metrics, traceEvents: TraceEvent[]): Promise<DiskUse | undefined>;
}

/** A Chrome trace event ("X" = complete event; microseconds). */
export interface TraceEvent {
  name: string;
  ph: 'X';
  ts: number;
  dur: number;
  pid: number;
  tid: number;
  args?: Record<string, number | string>;
}
