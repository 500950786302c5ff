// checkpoints.jsonl and metrics.jsonl rows, each written once whatever the number of retries.
import type { Metrics, PolicyState, RunSettings } from '../workflows/run-types';
import type { TraceEvent } from './types';
import { appendJsonl, appendJsonlOnce, readJsonl, runPaths, withRunDirLock } from './run-files';
import { faultPoint } from '../common/fault-points';
import { keepFinalCheckpoint } from './checkpoint-lifetimes';
import { recordConfigured } from '../sinks/configured';
import { currentRunLocation, finishRunSinks, writeStepSinks } from '../sinks/run-sinks';

/** A row as the cookbook's save_checkpoint writes it: {name, batch, state_path, sampler_path}. */
export async function saveCheckpoint(settings: RunSettings, name: string, batch: number, policy: PolicyState, final: boolean): Promise<string> {
  const row: Record<string, unknown> = { name, batch, state_path: policy.statePath, sampler_path: policy.samplerPath };
  if (final) row.final = true;
  const paths = runPaths(settings.logPath);
  let flushed = Promise.resolve();
  await withRunDirLock(paths.dir, () => {
    faultPoint('checkpoint.before_record', { run: settings.runName, batch });
    // A rolling row of the same step (checkpoint-lifetimes.ts) does not count: this one is written beside it.
    const rows = readJsonl(paths.checkpoints);
    if (!rows.some((r) => r.name === name && !r.rolling)) appendJsonl(paths.checkpoints, row);
    if (final) flushed = finishRunSinks(settings, currentRunLocation());
  });
  await flushed;
  if (final) await keepFinalCheckpoint(settings, policy);
  return policy.statePath;
}

/**
 * {"step": step, ...metrics} as the cookbook's JsonLogger, then the report, TensorBoard and W&B (sinks/). The
 * step's trace events go first, each unless already there, so a crash between the two writes leaves a retry
 * something to finish rather than a step without a trace.
 */
export async function logMetrics(settings: RunSettings, step: number, metrics: Metrics, traceEvents: TraceEvent[]): Promise<void> {
  const paths = runPaths(settings.logPath);
  await withRunDirLock(paths.dir, () => {
    const present = new Set(readJsonl(paths.trace).map((e) => JSON.stringify(e)));
    for (const e of traceEvents) if (!present.has(JSON.stringify(e))) appendJsonl(paths.trace, e);
    appendJsonlOnce(paths.metrics, 'step', { step, ...metrics });
    // The report, TensorBoard and W&B follow metrics.jsonl: a retry after a crash here catches them up.
    recordConfigured(settings, step);
    writeStepSinks(settings, currentRunLocation());
  });
}
