// What a report shows of one run, read from the files the run writes under its logPath: metrics.jsonl,
// checkpoints.jsonl, config.json and configured.jsonl (the settings `configure` changed, per step).
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { forEachJsonlRow, readJsonl, runPaths } from '../records/run-files';
import { RowBuckets, type FoldedRows, type Row } from './row-buckets';

export type { Row };

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
  /**
   * metrics.jsonl rows sorted by step, numbers only (a row's `step` included); a long run's are folded into at most
   * REPORT_POINTS points (report/row-buckets.ts).
   */
  rows: Row[];
  /** What folding must not blur: the steps logged, each metric's last value, the run's clock. */
  folded: Omit<FoldedRows, 'rows'>;
  checkpoints: Checkpoint[];
  configured: ConfiguredAt[];
}

export const configuredFile = (logPath: string) => runPaths(logPath).configured;

/** Points per run a report draws at most: beyond that many steps, neighbouring steps are averaged. */
export const REPORT_POINTS = 2000;

/** Reads a run's files; `status`, `uiLink` and `workflowId` override what the files alone can tell. */
export function loadRun(logPath: string, over: Partial<Pick<RunData, 'status' | 'uiLink' | 'workflowId'>> = {}): RunData {
  const paths = runPaths(logPath);
  if (!existsSync(paths.dir) || !statSync(paths.dir).isDirectory()) throw new Error(`${paths.dir}: no such run directory`);
  if (!existsSync(paths.metrics) && !existsSync(paths.config)) {
    throw new Error(`${paths.dir}: not a run directory (it has neither metrics.jsonl nor config.json)`);
  }
  const config = existsSync(paths.config) ? (JSON.parse(readFileSync(paths.config, 'utf8')) as Record<string, unknown>) : {};
  const name = typeof config.runName === 'string' ? config.runName : path.basename(paths.dir);
  const buckets = new RowBuckets(REPORT_POINTS);
  forEachJsonlRow(paths.metrics, (r) => buckets.add(numbersOnly(r)));
  const { rows, ...folded } = buckets.result();
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
    // The status reads the last row: the exact last values, not the last point's means.
    status: over.status ?? statusFromFiles(rows.length ? [{ ...folded.last, step: rows[rows.length - 1]!.step! }] : [], checkpoints),
    config,
    rows,
    folded,
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
