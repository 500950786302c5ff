// The commit record of a train step: written (atomically) only after the step's new state is saved on the
// trainer. A retried trainStep that finds its record returns it instead of stepping again, so an optimizer step
// is applied exactly once; one that finds none restarts from the parent state (see policy-client.ts).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TrainStepResult } from '../workflows/run-types';
import { runPaths, writeFileAtomic } from './run-files';

export interface StepRecord {
  /** The state this step started from: a record only counts for the same parent. */
  parentStatePath: string;
  result: TrainStepResult;
}

const recordFile = (logPath: string, step: number) => path.join(runPaths(logPath).steps, `${String(step).padStart(6, '0')}.json`);

export function readStepRecord(logPath: string, step: number, parentStatePath: string): TrainStepResult | undefined {
  const file = recordFile(logPath, step);
  if (!existsSync(file)) return undefined;
  const rec = JSON.parse(readFileSync(file, 'utf8')) as StepRecord;
  return rec.parentStatePath === parentStatePath ? rec.result : undefined;
}

export function writeStepRecord(logPath: string, step: number, record: StepRecord): void {
  writeFileAtomic(recordFile(logPath, step), JSON.stringify(record));
}
