// What the client can do with a run, as plain functions (client.ts and the dev launcher share them).
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { RunConfig } from '../config/run-config';
import { runNameOf } from '../config/run-config';
import { checkpointUpdate, configureUpdate, pauseSignal, progressQuery, resumeSignal, stopUpdate } from '../workflows/messages';
import type { CheckpointSaved, ConfigureResult, Progress, TrainingRunResult } from '../shared/run-types';
import type { RunChanges } from '../config/run-changes';
import type { trainingRun } from '../workflows/training-run';
import { progressLine, RewardHistory } from './progress-format';
import { CommandError, endedHow } from './mistakes';
import { blocksQueries, troubleKey } from './run-trouble';
import { setTimeout as sleep } from 'node:timers/promises';

export const workflowIdFor = (runName: string) => `agl-run-${runName}`;

export interface StartedRun {
  handle: WorkflowHandle<typeof trainingRun>;
  workflowId: string;
  /** False when a run with this id was already running and we attached to it. */
  started: boolean;
}

/**
 * Starts the run, or attaches to the one already running under the same name. With `fresh`, a new execution
 * replaces whatever ran under that id before (a running one is terminated).
 */
export async function startOrAttach(client: Client, taskQueue: string, cfg: RunConfig, opts: { fresh?: boolean } = {}): Promise<StartedRun> {
  const workflowId = workflowIdFor(runNameOf(cfg));
  try {
    const handle = await client.workflow.start<typeof trainingRun>('trainingRun', {
      taskQueue,
      workflowId,
      args: [{ config: cfg }],
      staticSummary: `RL training run ${runNameOf(cfg)}: ${cfg.modelName}, lr ${cfg.learningRate}, ${cfg.lossFn}`,
      workflowIdConflictPolicy: opts.fresh ? 'TERMINATE_EXISTING' : 'FAIL',
      // A finished run is shown, not redone; a failed or terminated one can start again and fast-forwards
      // through what it had already committed.
      workflowIdReusePolicy: opts.fresh ? 'ALLOW_DUPLICATE' : 'ALLOW_DUPLICATE_FAILED_ONLY',
    });
    return { handle, workflowId, started: true };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      return { handle: client.workflow.getHandle<typeof trainingRun>(workflowId), workflowId, started: false };
    }
    throw err;
  }
}

export function runHandle(client: Client, runOrWorkflowId: string): WorkflowHandle<typeof trainingRun> {
  const id = runOrWorkflowId.startsWith('agl-run-') ? runOrWorkflowId : workflowIdFor(runOrWorkflowId);
  return client.workflow.getHandle<typeof trainingRun>(id);
}

/**
 * Where a run is (its progress), how it finished (its result), or how it ended otherwise (`ended`: why it failed).
 * For a running run, `trouble` says what holds it up (cli/run-trouble.ts); when that is something the run cannot
 * answer a query through (no worker, a failing workflow task), the query is not even tried.
 */
export async function status(
  handle: WorkflowHandle<typeof trainingRun>,
  trouble: () => Promise<string[]> = async () => [],
): Promise<{ state: string; progress?: Progress; result?: TrainingRunResult; ended?: string; trouble?: string[]; waiting?: string }> {
  const d = await handle.describe();
  const state = d.status.name;
  if (state === 'RUNNING') {
    // Rollouts that may wait for ever (no runner of the run's agent, no worker on its agent workflow's queue).
    const waiting = rolloutsWaitingFor(d.raw.pendingActivities ?? []);
    const lines = [...(await trouble()), ...(waiting ? [`waiting: ${waiting}`] : [])];
    const why = waiting ? { waiting } : {};
    if (blocksQueries(lines)) return { state, trouble: lines, ...why };
    try {
      return { state, progress: await handle.query(progressQuery), trouble: lines, ...why };
    } catch (err) {
      return { state, trouble: [...lines, `the run does not answer (${(err as Error).message.split('\n')[0]}); the worker's log says why`], ...why };
    }
  }
  if (state === 'COMPLETED') return { state, result: await handle.result() };
  return { state, ended: await endedHow(handle, state) };
}

/** Why the rollouts a collect activity waits on may wait for ever, from its heartbeat details (`waiting`). */
function rolloutsWaitingFor(pending: { heartbeatDetails?: { payloads?: { data?: Uint8Array | null }[] | null } | null }[]): string | undefined {
  for (const a of pending) {
    const data = a.heartbeatDetails?.payloads?.[0]?.data;
    if (!data?.length) continue;
    try {
      const details = JSON.parse(Buffer.from(data).toString('utf8')) as { waiting?: unknown };
      if (typeof details?.waiting === 'string') return details.waiting;
    } catch {
      // not JSON: not ours
    }
  }
  return undefined;
}

/** Throws a one-line CommandError when the run is not running (a finished run can be neither stopped nor steered). */
export async function requireRunning(handle: WorkflowHandle<typeof trainingRun>, command: string): Promise<void> {
  const state = (await handle.describe()).status.name;
  if (state === 'RUNNING') return;
  const how = await endedHow(handle, state);
  throw new CommandError(`run ${handle.workflowId} is not running (${how.replace(/^[A-Z_]+/, (s) => s.toLowerCase().replace(/_/g, ' '))}); nothing to ${command}`);
}

export const pause = (h: WorkflowHandle<typeof trainingRun>) => h.signal(pauseSignal);
export const resume = (h: WorkflowHandle<typeof trainingRun>) => h.signal(resumeSignal);
export const stop = (h: WorkflowHandle<typeof trainingRun>, reason: string) => h.executeUpdate(stopUpdate, { args: [{ reason }] });

/** An update's reply, or the reason the workflow refused it. */
async function refusable<T>(send: () => Promise<T>): Promise<T | { refused: string }> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) return { refused: err.cause?.message ?? err.message };
    throw err;
  }
}

/** Records a checkpoint of the latest policy now (refused before the policy exists or once stopping). */
export const checkpoint = (h: WorkflowHandle<typeof trainingRun>) => refusable<CheckpointSaved>(() => h.executeUpdate(checkpointUpdate));

/** Changes settings from the next batch (refused, changing nothing, when a value is bad). */
export const configure = (h: WorkflowHandle<typeof trainingRun>, changes: RunChanges) =>
  refusable<ConfigureResult>(() => h.executeUpdate(configureUpdate, { args: [changes] }));

/** `key=value` words as a changes object; values are JSON (numbers), so the workflow checks their types. */
export function parseAssignments(words: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new Error(`expected key=value, got ${JSON.stringify(w)}`);
    const raw = w.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      /* kept as text; the workflow names the field */
    }
    out[w.slice(0, eq)] = value;
  }
  return out;
}

/**
 * Follows a run until it ends: in a terminal one line redrawn in place, otherwise a plain line whenever the
 * batch, phase or `waiting` hint changes. Returns the run's result.
 */
export async function watch(
  handle: WorkflowHandle<typeof trainingRun>,
  out: NodeJS.WriteStream = process.stdout,
  intervalMs = 1000,
  waiting: (p: Progress) => string | undefined = () => undefined,
  trouble: () => Promise<string[]> = async () => [],
): Promise<TrainingRunResult> {
  const tty = out.isTTY === true;
  let lastKey = '';
  let lastWarning = '';
  let done = false;
  const rewards = new RewardHistory();
  const result = handle.result().finally(() => {
    done = true;
  });
  // Handled where it is returned; without this a run that fails while a query is in flight is an unhandled rejection.
  result.catch(() => undefined);
  // What holds the run up (cli/run-trouble.ts), looked at every 5 s: printed once per change, as warnings are.
  let troubleAt = 0;
  let lastTrouble = '';
  let blocked = false;
  while (!done) {
    if (Date.now() - troubleAt >= 5000) {
      troubleAt = Date.now();
      const lines = await trouble().catch(() => [] as string[]);
      blocked = blocksQueries(lines);
      const key = troubleKey(lines);
      if (key && key !== lastTrouble) out.write(`${tty ? '\r\x1b[2K' : ''}${lines.map((l) => `WARNING: ${l}`).join('\n')}\n`);
      lastTrouble = key;
    }
    try {
      if (blocked) throw new Error('blocked');
      const p = await handle.query(progressQuery);
      rewards.observe(p);
      const hint = waiting(p);
      const line = progressLine(p, Date.now(), rewards.values(), hint);
      // A warning gets a line of its own in a terminal (the progress line is cut to its width), once per change.
      const warning = p.pauseReason ?? p.warning ?? '';
      if (tty && warning && warning !== lastWarning) out.write(`\r\x1b[2K${p.pauseReason ? 'PAUSED BY THE RUN' : 'WARNING'}: ${warning}\n`);
      lastWarning = warning;
      // One terminal line, redrawn: a longer one would wrap and leave its head behind.
      if (tty) out.write(`\r\x1b[2K${out.columns ? line.slice(0, out.columns - 1) : line}`);
      else {
        const key = `${p.batch}|${p.phase}|${p.paused}|${hint ?? ''}|${warning}`;
        if (key !== lastKey) out.write(`${line}\n`);
        lastKey = key;
      }
    } catch {
      /* no worker answering right now (restarting): keep waiting */
    }
    await Promise.race([result.catch(() => undefined), sleep(intervalMs)]);
  }
  if (tty) out.write('\n');
  return result;
}

