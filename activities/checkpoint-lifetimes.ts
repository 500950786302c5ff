// How long the states and samplers of a run live on the service. The rule: no expiry ever applies to a state the
// run may still resume from, however long it stays paused.
// - The live policy (the parent of the next step) is saved without a TTL.
// - Once a newer step commits, the parent it superseded is retired: a state or sampler that a checkpoint row names
//   gets `checkpointTtlSeconds` (null = kept), as the cookbook's CheckpointManager keeps checkpoints; any other one
//   gets SUPERSEDED_TTL_SECONDS, time enough for a rollout still sampling from it (async runs) and for an operator's
//   look, after which the trainer's sweeper deletes it (with `retainSteps: "all"` it is kept). Sooner than that, a
//   step's state and sampler are deleted once `retainSteps` newer steps committed (deletionWindow below).
// - A checkpoint row written for a policy already superseded gives it the row's lifetime then.
// - The final checkpoint is kept (its expiry removed).
// - With `rollingSaveEvery`, a `rolling` row names a separate save of the step's state that lives
//   `rollingTtlSeconds` (2 hours) and is deleted once a newer rolling one exists.
import { TinkerApiError } from '../tinker';
import type { PolicyState, RunSettings } from '../shared/run-types';
import type { TrainingClient } from '../tinker';
import { parsePyJsonLine, recordJson } from '../records/run-files';
import { checkpointKey, putRecords, recordsAfter } from './run-records';
import { tinkerFor } from './services';

/** How many older rolling rows a rolling save looks back over to delete their states. */
const ROLLING_LOOKBACK = 3;

/** A superseded state or sampler no checkpoint row names lives this long (the service's shortest TTL). */
export const SUPERSEDED_TTL_SECONDS = 3600;

/** The TTL of a checkpoint a row names; null = kept. */
export const checkpointTtlOf = (s: RunSettings): number | null => s.checkpointTtlSeconds ?? null;

/** Gone or refused (e.g. already deleted by the sweeper): nothing left to do for that path. */
const ignoreGone = (err: unknown) => {
  if (!(err instanceof TinkerApiError && (err.isUserError || err.status === 404))) throw err;
};

/** The final checkpoint is kept: any expiry of its state and sampler is removed, and rolling states are cleaned up. */
export async function keepFinalCheckpoint(settings: RunSettings, policy: PolicyState): Promise<void> {
  for (const p of [policy.statePath, policy.samplerPath]) {
    try {
      await tinkerFor(settings).setCheckpointTtl(p, null);
    } catch (err) {
      // Gone or refused: say so, rather than retry the run's last activity forever.
      if (!(err instanceof TinkerApiError && err.isUserError)) throw err;
      process.stderr.write(`[tinker] run ${settings.runName}: could not keep the final checkpoint ${p}: ${err.message}\n`);
    }
  }
  await deleteRollingStates(settings, await checkpointRows(settings), [policy.statePath]);
}

/**
 * After step `next` committed on top of `parent`: the parent is no longer a state the run resumes from, so it
 * gets its lifetime (see the top of this file). Idempotent: a retry of the step sets the same expiries again.
 */
export async function retireSuperseded(settings: RunSettings, parent: PolicyState, next: PolicyState): Promise<void> {
  if (parent.statePath === next.statePath) return;
  const named = namedPaths(await checkpointRows(settings));
  // Runs from before `retainSteps` existed kept every state: they still do.
  const keepAll = (settings.retainSteps ?? 'all') === 'all';
  const tinker = tinkerFor(settings);
  for (const p of [parent.statePath, parent.samplerPath]) {
    if (!p || p === next.statePath || p === next.samplerPath) continue;
    const ttl = named.has(p) ? checkpointTtlOf(settings) : keepAll ? null : SUPERSEDED_TTL_SECONDS;
    if (ttl !== null) await tinker.setCheckpointTtl(p, ttl).catch(ignoreGone);
  }
  // The hour bounds a run by time; a fast run also saves thousands of steps in an hour: past the retained window
  // the per-step state and sampler go now (the trainer's disk and memory then hold a window of steps, not an hour).
  const window = deletionWindow(settings);
  if (window === null) return;
  for (let step = Math.max(0, parent.step + 1 - window); step <= next.step - window; step++) {
    for (const p of [stepPath(next.statePath, next.step, step), stepPath(next.samplerPath, next.step, step)]) {
      if (p === undefined || named.has(p)) continue;
      await tinker.deleteCheckpoint(p).catch(ignoreGone);
    }
  }
}

/**
 * How many steps back a superseded per-step state and sampler are deleted: `retainSteps`, but never within reach
 * of a group still sampling (an async group may run maxStepsOffPolicy behind; a retried or timed-out call a step
 * more). null: kept until their TTL (`retainSteps: "all"`, or the 'late' async rule, whose stragglers have no bound).
 */
export function deletionWindow(settings: Pick<RunSettings, 'retainSteps' | 'async'>): number | null {
  const retain = settings.retainSteps ?? 'all';
  if (retain === 'all' || settings.async?.staleRule === 'late') return null;
  return Math.max(retain, (settings.async?.maxStepsOffPolicy ?? 0) + 2);
}

/** The name a step's state and sampler are saved under (and a rolling save's suffix). */
export const stepCheckpointName = (step: number): string => String(step).padStart(6, '0');

/** The same run's checkpoint of `step`, when `path` (of `atStep`) is named by its step as train steps save them. */
export function stepPath(path: string, atStep: number, step: number): string | undefined {
  const name = stepCheckpointName(atStep);
  if (!path.endsWith(`/${name}`)) return undefined;
  return `${path.slice(0, -name.length)}${stepCheckpointName(step)}`;
}

/** A checkpoint row now names `policy`: when the run has already moved past it, it takes the row's lifetime. */
export async function keepNamedSuperseded(settings: RunSettings, policy: PolicyState, superseded: boolean): Promise<void> {
  if (!superseded) return;
  for (const p of [policy.statePath, policy.samplerPath]) await tinkerFor(settings).setCheckpointTtl(p, checkpointTtlOf(settings)).catch(ignoreGone);
}

/**
 * The cookbook's rolling checkpoint, for a step that is a multiple of `rollingSaveEvery` and not a periodic one:
 * the state saved again under its own name with `rollingTtlSeconds`, a `{"name", "batch", "state_path",
 * "rolling": true}` row naming it, and the states of older rolling rows deleted, except `parentStatePath` (rows of
 * runs from before rolling saves were separate named live states) and any state a non-rolling row names.
 */
export async function saveRollingCheckpoint(settings: RunSettings, step: number, tc: TrainingClient, parentStatePath: string): Promise<void> {
  const every = settings.rollingSaveEvery ?? 0;
  if (every <= 0 || step % every !== 0 || (settings.saveEvery > 0 && step % settings.saveEvery === 0)) return;
  const name = stepCheckpointName(step);
  const statePath = await tc.saveState(`rolling-${name}`, { ttlSeconds: settings.rollingTtlSeconds });
  const rows = await checkpointRows(settings);
  const row = { name, batch: step, state_path: statePath, rolling: true };
  await putRecords(settings, [{ kind: 'checkpoint', step, key: checkpointKey(row), body: recordJson(row) }]);
  await deleteRollingStates(settings, rows, [statePath, parentStatePath]);
}

/** The run's checkpoint rows, from the store (checkpoints.jsonl is their export). */
async function checkpointRows(settings: RunSettings): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const page of recordsAfter(settings, 'checkpoint', 0)) rows.push(...page.map((r) => parsePyJsonLine(r.body) as Record<string, unknown>));
  return rows;
}

/** Paths named by non-rolling rows. */
function namedPaths(rows: Record<string, unknown>[]): Set<unknown> {
  return new Set(rows.filter((r) => !r.rolling).flatMap((r) => [r.state_path, r.sampler_path]));
}

async function deleteRollingStates(settings: RunSettings, rows: Record<string, unknown>[], keep: string[]): Promise<void> {
  const named = namedPaths(rows);
  const rolling = rows.filter((r) => r.rolling && typeof r.state_path === 'string').slice(-ROLLING_LOOKBACK);
  for (const r of rolling) {
    const p = r.state_path as string;
    if (keep.includes(p) || named.has(p)) continue;
    await tinkerFor(settings).deleteCheckpoint(p).catch(ignoreGone);
  }
}
