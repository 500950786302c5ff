// The ways to steer a running training run: signals to pause and resume, updates to stop cleanly, to save a
// checkpoint now and to change settings from the next batch, a query for progress. Names are what `temporal workflow signal/update/query --name ...` takes.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunChanges } from '../config/run-changes';
import type { CheckpointSaved, ConfigureResult, Progress, StopRequest } from '../shared/run-types';

export const pauseSignal = defineSignal<[]>('pause');
export const resumeSignal = defineSignal<[]>('resume');
/** Finishes the batch in flight, saves a final checkpoint and ends; returns the number of batches run. */
export const stopUpdate = defineUpdate<{ stoppedAfterBatch: number; finalCheckpoint: string | null }, [StopRequest]>('stop');
/**
 * Records a checkpoint of the latest trained policy now, without waiting for `saveEvery`: a row in
 * checkpoints.jsonl named after its step, as the periodic one would be. Rejected before the policy exists.
 */
export const checkpointUpdate = defineUpdate<CheckpointSaved, []>('checkpoint');
/**
 * Changes learningRate, evalEvery, saveEvery, trainTemperature or evalTemperature from the next batch to start on
 * (kept across continue-as-new). Checked as the run config is; a bad value is refused and changes nothing.
 */
export const configureUpdate = defineUpdate<ConfigureResult, [RunChanges]>('configure');
export const progressQuery = defineQuery<Progress>('progress');
