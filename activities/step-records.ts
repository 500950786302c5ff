// The commit record of a train step: written only after the step's new state is saved on the trainer. A retried
// trainStep that finds its record returns it instead of stepping again, so an optimizer step is applied exactly
// once; one that finds none restarts from the parent state (see policy-client.ts). Records live in the store
// (run-records.ts), so a retry on any host finds them.
import type { TrainStepResult, RunSettings } from '../shared/run-types';
import { findRecord, putRecords } from './run-records';

export interface StepRecord {
  /** The state this step started from: a record only counts for the same parent. */
  parentStatePath: string;
  result: TrainStepResult;
  /** Async runs: the keys of the groups the step trained (so a test or an operator can check none twice). */
  groups?: string[];
}

export async function readStepRecord(settings: RunSettings, step: number, parentStatePath: string): Promise<TrainStepResult | undefined> {
  const rec = await findRecord(settings, { kind: 'step', step, key: parentStatePath });
  return rec ? (JSON.parse(rec.body) as StepRecord).result : undefined;
}

/**
 * Commits `record` and returns the result that stands for the step. The first commit from a parent wins: a stale
 * attempt on another worker that finishes the same step later gets the first one's result back (the same
 * weights, since steps are deterministic), so every reader agrees on one state path. A record from a different
 * parent (a run restarted from another state) is another record.
 */
export async function commitStepRecord(settings: RunSettings, step: number, record: StepRecord): Promise<TrainStepResult> {
  const [standing] = await putRecords(settings, [{ kind: 'step', step, key: record.parentStatePath, body: JSON.stringify(record) }]);
  return (JSON.parse(standing!.body) as StepRecord).result;
}
