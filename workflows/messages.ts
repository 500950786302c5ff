// The ways to steer a running training run: signals to pause and resume, an update to stop cleanly, a query
// for progress. Names are what `temporal workflow signal/update/query --name ...` takes.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Progress, StopRequest } from './run-types';

export const pauseSignal = defineSignal<[]>('pause');
export const resumeSignal = defineSignal<[]>('resume');
/** Finishes the batch in flight, saves a final checkpoint and ends; returns the number of batches run. */
export const stopUpdate = defineUpdate<{ stoppedAfterBatch: number; finalCheckpoint: string | null }, [StopRequest]>('stop');
export const progressQuery = defineQuery<Progress>('progress');
