// configured.jsonl: for each step run with settings changed by `configure`, the changes in force
// ({step, learningRate: ..., ...}), so the report can mark when they changed. Written once per step.
import { existsSync, readFileSync } from 'node:fs';
import { appendJsonlOnce, runPaths } from '../activities/run-files';
import { RunChangesSchema } from '../config/run-changes';
import { configuredFile } from '../report/run-data';
import type { RunSettings } from '../workflows/run-types';

/** The changeable settings whose value for this step differs from config.json. */
export function changesInForce(settings: RunSettings, configured: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(RunChangesSchema.shape) as (keyof RunSettings)[]) {
    const v = settings[k];
    if (typeof v === 'number' && k in configured && configured[k] !== v) out[k] = v;
  }
  return out;
}

export function recordConfigured(settings: RunSettings, step: number): void {
  const file = runPaths(settings.logPath).config;
  if (!existsSync(file)) return;
  const changes = changesInForce(settings, JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
  if (Object.keys(changes).length) appendJsonlOnce(configuredFile(settings.logPath), 'step', { step, ...changes });
}
