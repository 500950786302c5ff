// Where each logged step goes besides metrics.jsonl: the HTML report (always), TensorBoard event files (with
// tensorboardDir) and W&B (with wandbProject). The sinks get the rows each export appended; a process catches
// them up from metrics.jsonl once (they skip steps they have), so a step whose sinks a crash interrupted is
// written by a later call, and never twice.
import { Context } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePyJsonLine, readJsonl, runPaths } from '../records/run-files';
import type { RunSettings } from '../workflows/run-types';
import { temporalSettings, workflowUiLink } from '../common/temporal-settings';
import { writeRunReport } from '../report/write-report';
import { writeTensorboard, type StepRow } from './tensorboard';
import { appendWandbSteps, finishWandbLog, type WandbRunSpec } from './wandb-local-run';
import { finishWandbStream, streamWandbSteps } from './wandb-online';

/** What the report header says about where the run lives in Temporal. */
export interface RunLocation {
  workflowId?: string;
  uiLink?: string | null;
}

type WandbMode = 'online' | 'offline' | 'disabled';

const warned = new Set<string>();
function warnOnce(key: string, message: string): void {
  if (warned.has(key)) return;
  warned.add(key);
  console.warn(message);
}

/** WANDB_MODE as the Python SDK reads it; online without an API key writes offline, and says so once. */
export function wandbMode(env: NodeJS.ProcessEnv = process.env): WandbMode {
  const mode = (env.WANDB_MODE ?? 'online').toLowerCase();
  if (mode === 'disabled') return 'disabled';
  if (mode === 'offline' || mode === 'dryrun') return 'offline';
  if (mode !== 'online' && mode !== 'run') throw new Error(`WANDB_MODE=${env.WANDB_MODE}: expected online, offline or disabled`);
  if (env.WANDB_API_KEY || hasNetrcKey(env)) return 'online';
  return 'offline';
}

function hasNetrcKey(env: NodeJS.ProcessEnv): boolean {
  const file = env.NETRC ?? path.join(os.homedir(), '.netrc');
  const host = (env.WANDB_BASE_URL ?? 'https://api.wandb.ai').replace(/^https?:\/\//, '').split('/')[0]!;
  return existsSync(file) && readFileSync(file, 'utf8').includes(`machine ${host}`);
}

/**
 * The W&B run of a training run: one per run instance (a fresh run of the same name gets a new one), so a
 * restarted worker or a continue-as-new resumes it instead of starting another.
 */
export function wandbSpec(settings: RunSettings, offline: boolean): WandbRunSpec {
  const id = createHash('sha256').update(settings.instanceId ?? settings.runName).digest('hex').slice(0, 12);
  return {
    root: settings.logPath,
    id,
    project: settings.wandbProject!,
    entity: process.env.WANDB_ENTITY || null,
    name: settings.wandbName ?? settings.runName,
    config: loadConfig(settings),
    offline,
  };
}

/** The run's config.json (as the run started; `configure` changes show in the metrics), else the settings. */
function loadConfig(settings: RunSettings): Record<string, unknown> {
  const file = runPaths(settings.logPath).config;
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : { ...settings };
}

function stepRows(settings: RunSettings): StepRow[] {
  return readJsonl(runPaths(settings.logPath).metrics)
    .filter((r): r is StepRow => Number.isInteger(r.step))
    .sort((a, b) => a.step - b.step);
}

function guarded(sink: string, settings: RunSettings, fn: () => void): boolean {
  try {
    fn();
    return true;
  } catch (err) {
    console.warn(`${sink} of run ${settings.runName}: ${(err as Error).message} (metrics.jsonl has the step; the next step tries again)`);
    return false;
  }
}

function wandbTargets(settings: RunSettings): { spec: WandbRunSpec; online: boolean } | null {
  if (!settings.wandbProject) return null;
  const mode = wandbMode();
  if (mode === 'disabled') return null;
  if (mode === 'offline' && (process.env.WANDB_MODE ?? 'online').toLowerCase() === 'online') {
    warnOnce('wandb-nokey', `W&B: no WANDB_API_KEY (nor a ~/.netrc entry); run ${settings.runName} is logged offline under ${path.join(settings.logPath, 'wandb')}: upload it with \`wandb sync\``);
  }
  return { spec: wandbSpec(settings, mode === 'offline'), online: mode === 'online' };
}

// Runs whose sinks this process has caught up from metrics.jsonl in full; after that, each export's new rows are
// enough. A sink that failed puts its run back here, so the next export catches it up again.
const caughtUp = new Set<string>();
// The step at which this process last rewrote a run's report.
const reportedAt = new Map<string, number>();

/**
 * Whether the report is rewritten after `step`: every step for the first 100, then every step/100 steps (1% of
 * the run late in it), so its rewrites cost a flat amount per step on average instead of growing with the run.
 */
export function reportDue(lastReported: number | undefined, step: number): boolean {
  return lastReported === undefined || step < 100 || step - lastReported >= Math.floor(step / 100);
}

/**
 * After an export (under the run directory lock): TensorBoard and W&B get the rows it appended (all of
 * metrics.jsonl the first time in this process, as they skip the steps they have), the report is rewritten when due.
 */
export function writeStepSinks(settings: RunSettings, where: RunLocation, added: { body: string }[] | 'all' = 'all'): void {
  const id = path.resolve(settings.logPath);
  const full = added === 'all' || !caughtUp.has(id);
  const rows = full ? stepRows(settings) : added.map((r) => parsePyJsonLine(r.body) as StepRow).filter((r) => Number.isInteger(r.step));
  let ok = true;
  const sink = (name: string, fn: () => void) => (ok = guarded(name, settings, fn) && ok);
  if (rows.length && settings.tensorboardDir) sink('TensorBoard', () => writeTensorboard(settings.tensorboardDir!, settings.runName, rows));
  const wb = wandbTargets(settings);
  if (rows.length && wb) {
    sink('W&B log', () => appendWandbSteps(wb.spec, rows));
    if (wb.online) sink('W&B stream', () => streamWandbSteps(wb.spec, rows));
  }
  if (ok) caughtUp.add(id);
  else caughtUp.delete(id);
  const last = rows.length ? Math.max(...rows.map((r) => r.step)) : undefined;
  // An export with no new step (a checkpoint row) waits for the next due rewrite, or the final one.
  if (added === 'all' || (last !== undefined && reportDue(reportedAt.get(id), last))) {
    if (guarded('report', settings, () => writeRunReport(settings.logPath, where)) && last !== undefined) reportedAt.set(id, last);
  }
}

/**
 * After the final checkpoint (under the run directory lock): the report says how the run ended and the W&B run
 * is marked finished. The returned promise waits for the W&B stream to flush; await it outside the lock.
 */
export function finishRunSinks(settings: RunSettings, where: RunLocation): Promise<void> {
  writeStepSinks(settings, where);
  const wb = wandbTargets(settings);
  if (!wb) return Promise.resolve();
  guarded('W&B log', settings, () => finishWandbLog(wb.spec));
  if (!wb.online) return Promise.resolve();
  return finishWandbStream(wb.spec, stepRows(settings)).catch((err: Error) => console.warn(`W&B stream of run ${settings.runName}: ${err.message}`));
}

/** The workflow and its UI link, inside an activity (empty elsewhere). */
export function currentRunLocation(): RunLocation {
  let info;
  try {
    info = Context.current().info;
  } catch {
    return {};
  }
  const workflowId = info.workflowExecution?.workflowId;
  if (!workflowId) return {};
  return { workflowId, uiLink: workflowUiLink(temporalSettings({ namespace: info.workflowNamespace }), workflowId) };
}
