// checkpoints.jsonl and metrics.jsonl rows, each written once whatever the number of retries.
import type { Metrics, PolicyState, RunSettings } from '../workflows/run-types';
import type { TraceEvent } from './types';
import { appendJsonl, appendJsonlOnce, runPaths } from './run-files';
import { faultPoint } from '../common/fault-points';

/** A row as the cookbook's save_checkpoint writes it: {name, batch, state_path, sampler_path}. */
export async function saveCheckpoint(settings: RunSettings, name: string, batch: number, policy: PolicyState, final: boolean): Promise<string> {
  const row: Record<string, unknown> = { name, batch, state_path: policy.statePath, sampler_path: policy.samplerPath };
  if (final) row.final = true;
  faultPoint('checkpoint.before_record', { run: settings.runName, batch });
  appendJsonlOnce(runPaths(settings.logPath).checkpoints, 'name', row);
  return policy.statePath;
}

/** {"step": step, ...metrics} as the cookbook's JsonLogger; trace events go with the first write of a step. */
export async function logMetrics(settings: RunSettings, step: number, metrics: Metrics, traceEvents: TraceEvent[]): Promise<void> {
  const paths = runPaths(settings.logPath);
  const wrote = appendJsonlOnce(paths.metrics, 'step', { step, ...metrics });
  if (wrote) for (const e of traceEvents) appendJsonl(paths.trace, e);
}
