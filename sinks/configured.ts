// configured.jsonl: for each step run with settings changed by `configure`, the changes in force
// ({step, learningRate: ..., ...}), so the report can mark when they changed. One record per step (run-records.ts).
import { recordJson } from '../records/run-files';
import { RunChangesSchema } from '../config/run-changes';
import type { RunRecordInput } from '../store/run-records';
import type { RunSettings } from '../shared/run-types';

/** The changeable settings whose value for this step differs from config.json. */
export function changesInForce(settings: RunSettings, configured: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(RunChangesSchema.shape) as (keyof RunSettings)[]) {
    const v = settings[k];
    if (typeof v === 'number' && k in configured && configured[k] !== v) out[k] = v;
  }
  return out;
}

/** The step's configured row as a run record, when settings differ from config.json (the run's start). */
export function configuredRecord(settings: RunSettings, configJson: string | undefined, step: number): RunRecordInput | null {
  if (configJson === undefined) return null;
  const changes = changesInForce(settings, JSON.parse(configJson) as Record<string, unknown>);
  return Object.keys(changes).length ? { kind: 'configured', step, body: recordJson({ step, ...changes }) } : null;
}
