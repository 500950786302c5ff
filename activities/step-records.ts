// The commit record of a train step: written (atomically) only after the step's new state is saved on the
// trainer. A retried trainStep that finds its record returns it instead of stepping again, so an optimizer step
// is applied exactly once; one that finds none restarts from the parent state (see policy-client.ts).
import { existsSync, linkSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { TrainStepResult } from '../workflows/run-types';
import { runPaths, writeFileAtomic } from './run-files';

export interface StepRecord {
  /** The state this step started from: a record only counts for the same parent. */
  parentStatePath: string;
  result: TrainStepResult;
  /** Async runs: the keys of the groups the step trained (so a test or an operator can check none twice). */
  groups?: string[];
}

const recordFile = (logPath: string, step: number) => path.join(runPaths(logPath).steps, `${String(step).padStart(6, '0')}.json`);

function readRecord(file: string): StepRecord | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as StepRecord) : undefined;
}

export function readStepRecord(logPath: string, step: number, parentStatePath: string): TrainStepResult | undefined {
  const rec = readRecord(recordFile(logPath, step));
  return rec?.parentStatePath === parentStatePath ? rec.result : undefined;
}

/**
 * Commits `record` and returns the result that stands for the step. The first commit from a parent wins: a stale
 * attempt on another worker that finishes the same step later gets the first one's result back (the same
 * weights, since steps are deterministic), so every reader agrees on one state path. A record from a different
 * parent (a run restarted from another state) is replaced.
 */
export function commitStepRecord(logPath: string, step: number, record: StepRecord): TrainStepResult {
  const file = recordFile(logPath, step);
  const draft = `${file}.draft-${process.pid}-${Date.now()}`;
  writeFileAtomic(draft, JSON.stringify(record));
  try {
    linkSync(draft, file); // fails if a record exists, unlike rename, which would replace it
    return record.result;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const standing = readRecord(file);
    if (standing?.parentStatePath === record.parentStatePath) return standing.result;
    writeFileAtomic(file, JSON.stringify(record));
    return record.result;
  } finally {
    unlinkSync(draft);
  }
}
