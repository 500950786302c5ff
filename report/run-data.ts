// What a report shows of one run, read from the files the run writes under its logPath: metrics.jsonl,
// checkpoints.jsonl, config.json and configured.jsonl (the settings `configure` changed, per step).
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { readJsonl, runPaths } from '../records/run-files';

export type Row = Record<string, number>;

export interface Checkpoint {
  name: string;
  batch: number;
  statePath: string;
  final: boolean;
}

/** From this step on, the run used these settings over its config (learningRate=..., evalEvery=...). */
export interface ConfiguredAt {
  step: number;
  changes: Record<string, number>;
}

export interface RunData {
  name: string;
  logPath: string;
  workflowId: string;
  /** The run in the Temporal UI, when known. */
  uiLink: string | null;
  /** running (step k of n), finished, stopped, or what Temporal says (failed, terminated, ...). */
  status: string;
  config: Record<string, unknown>;
  /** metrics.jsonl rows sorted by step, numbers only (a row's `step` included). */
  rows: Row[];
  checkpoints: Checkpoint[];
  configured: ConfiguredAt[];
}

export const configuredFile = (logPath: string) => runPaths(logPath).configured;

/** Reads a run's files; `status`, `uiLink` and `workflowId` override what the files alone can tell. */
export function loadRun(logPath: string, over: Partial<Pick<RunData, 'status' | 'uiLink' | 'workflowId'>> = {}): RunData {
  const paths = runPaths(logPath);
  if (!existsSync(paths.dir) || !statSync(paths.dir).isDirectory()) throw new Error(`${paths.dir}: no such run directory`);
  if (!existsSync(paths.metrics) && !existsSync(paths.config)) {
    throw new Error(`${paths.dir}: not a run directory (it has neither metrics.jsonl nor config.json)`);
  }
  const config = existsSync(paths.config) ? (JSON.parse(readFileSync(paths.config, 'utf8')) as Record<string, unknown>) : {};
  const name = typeof config.runName === 'string' ? config.runName : path.basename(paths.dir);
  const rows = readJsonl(paths.metrics)
    .map(numbersOnly)
    .filter((r) => Number.isInteger(r.step))
    .sort((a, b) => a.step! - b.step!);
  const checkpoints = readJsonl(paths.checkpoints).map((c) => ({
    name: String(c.name),
    batch: Number(c.batch),
    statePath: String(c.state_path ?? ''),
    final: c.final === true,
  }));
  const configured = readJsonl(configuredFile(logPath)).map(({ step, ...changes }) => ({ step: Number(step), changes: numbersOnly(changes) }));
  return {
    name,
    logPath: paths.dir,
    workflowId: over.workflowId ?? `agl-run-${name}`,
    uiLink: over.uiLink ?? null,
    status: over.status ?? statusFromFiles(rows, checkpoints),
    config,
    rows,
    checkpoints,
    configured,
  };
}

function numbersOnly(r: Record<string, unknown>): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(r)) if (typeof v === 'number') out[k] = v;
  return out;
}

/** What the files tell: a final checkpoint ends a run ('final' when it ran to the end); else it is running. */
export function statusFromFiles(rows: Row[], checkpoints: Checkpoint[]): string {
  const final = checkpoints.find((c) => c.final);
  if (final) return final.name === 'final' ? `finished after ${final.batch} steps` : `stopped after ${final.batch} steps`;
  const last = rows[rows.length - 1];
  if (!last) return 'starting';
  const doneFrac = last['progress/done_frac'];
  const total = doneFrac && doneFrac > 0 ? Math.round((last.step! + 1) / doneFrac) : null;
  return `running: ${last.step! + 1}${total ? ` of ${total}` : ''} steps done`;
}
