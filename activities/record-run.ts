// A run's checkpoint rows and metrics rows: written once to the store whatever the number of retries (on any
// host), then exported to the run's files and sinks (run-export.ts), incrementally.
import type { DiskUse, Metrics, PolicyState, RunSettings } from '../shared/run-types';
import type { TraceEvent } from './types';
import { recordJson, runPaths, withRunDirLock } from '../records/run-files';
import { faultPoint } from '../common/fault-points';
import { keepFinalCheckpoint, keepNamedSuperseded } from './checkpoint-lifetimes';
import { readStepRecord } from './step-records';
import { configuredRecord } from '../sinks/configured';
import { currentRunLocation, finishRunSinks, writeStepSinks } from '../sinks/run-sinks';
import { checkpointKey, localRunFile, putRecords, traceKey } from './run-records';
import { exportRunFiles } from './run-export';
import { pruneOldRollouts } from './retention';
import { readDiskUse } from './disk-report';
import type { RunRecordInput } from '../store/run-records';

/** A row as the cookbook's save_checkpoint writes it: {name, batch, state_path, sampler_path}. */
export async function saveCheckpoint(settings: RunSettings, name: string, batch: number, policy: PolicyState, final: boolean): Promise<string> {
  const row: Record<string, unknown> = { name, batch, state_path: policy.statePath, sampler_path: policy.samplerPath };
  if (final) row.final = true;
  faultPoint('checkpoint.before_record', { run: settings.runName, batch });
  // A rolling row of the same step (checkpoint-lifetimes.ts) is another record: this one is written beside it.
  await putRecords(settings, [{ kind: 'checkpoint', step: batch, key: checkpointKey(row), body: recordJson(row) }]);
  const { flushed } = await exportAndSink(settings, final);
  await flushed;
  if (final) await keepFinalCheckpoint(settings, policy);
  // A row for a policy the run has already moved past (a checkpoint update racing a step): it takes the row's lifetime.
  else {
    const next = await readStepRecord(settings, policy.step + 1, policy.statePath);
    await keepNamedSuperseded(settings, policy, !!next && next.state.statePath !== policy.statePath);
  }
  return policy.statePath;
}

/**
 * {"step": step, ...metrics} as the cookbook's JsonLogger, the step's trace events and the settings `configure`
 * changed, in one write to the store (so a crash leaves all or none), then the files, the report, TensorBoard
 * and W&B catch up with the store. Returns the disk use behind the run (read meanwhile).
 */
export async function logMetrics(settings: RunSettings, step: number, metrics: Metrics, traceEvents: TraceEvent[]): Promise<DiskUse> {
  const records: RunRecordInput[] = traceEvents.map((e) => {
    const body = recordJson(e);
    return { kind: 'trace', step, key: traceKey(body), body };
  });
  records.push({ kind: 'metrics', step, body: recordJson({ step, ...metrics }) });
  const configured = configuredRecord(settings, await localRunFile(settings, 'config.json'), step);
  if (configured) records.push(configured);
  await putRecords(settings, records);
  // Read beside the export and retention, so its deadline adds nothing to the step unless a service is slow.
  const disk = readDiskUse(settings, step);
  await exportAndSink(settings, false);
  await pruneOldRollouts(settings, step);
  return disk;
}

/**
 * Exports the run's files under its directory lock and catches the sinks up; with `final`, the W&B run is marked
 * finished. Returns the W&B stream's flush, to be awaited outside the lock.
 */
async function exportAndSink(settings: RunSettings, final: boolean): Promise<{ flushed: Promise<void> }> {
  return withRunDirLock(runPaths(settings.logPath).dir, async () => {
    await localRunFile(settings, 'config.json');
    const added = await exportRunFiles(settings);
    const where = currentRunLocation();
    if (final) return { flushed: finishRunSinks(settings, where) };
    writeStepSinks(settings, where, added);
    return { flushed: Promise.resolve() };
  });
}
