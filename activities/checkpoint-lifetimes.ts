// How long the checkpoints of a run live on the service, as the cookbook's CheckpointManager keeps them: every
// save carries `checkpointTtlSeconds` (default 7 days), the final checkpoint is kept (its expiry removed), and
// with `rollingSaveEvery` a `rolling` checkpoint row (in the store; checkpoints.jsonl) names a resume-only state that lives
// `rollingTtlSeconds` (2 hours) and is deleted once a newer rolling one exists. Runs started before these
// settings existed carry none of them and keep everything, as they did.
import { TinkerApiError } from '../tinker';
import type { PolicyState, RunSettings } from '../workflows/run-types';
import { pyJsonDumps } from '../chat/py-json';
import { parsePyJsonLine } from '../records/run-files';
import { checkpointKey, putRecords, recordsAfter } from './run-records';
import { tinkerFor } from './services';

/** How many older rolling rows a rolling save looks back over to delete their states. */
const ROLLING_LOOKBACK = 3;

/** The TTL every save of the run carries; null = kept. */
export const checkpointTtlOf = (s: RunSettings): number | null => s.checkpointTtlSeconds ?? null;

/** The final checkpoint is kept: the expiry its step's saves carry is removed, and rolling states are cleaned up. */
export async function keepFinalCheckpoint(settings: RunSettings, policy: PolicyState): Promise<void> {
  if (checkpointTtlOf(settings) === null && !(settings.rollingSaveEvery > 0)) return;
  for (const p of [policy.statePath, policy.samplerPath]) {
    try {
      await tinkerFor(settings).setCheckpointTtl(p, null);
    } catch (err) {
      // Gone or refused: say so, rather than retry the run's last activity forever.
      if (!(err instanceof TinkerApiError && err.isUserError)) throw err;
      process.stderr.write(`[tinker] could not keep the final checkpoint ${p}: ${err.message}\n`);
    }
  }
  await deleteRollingStates(settings, await checkpointRows(settings), [policy.statePath]);
}

/**
 * The cookbook's rolling checkpoint, for a step that is a multiple of `rollingSaveEvery` and not a periodic one:
 * a `{"name", "batch", "state_path", "rolling": true}` row, the state's TTL set to `rollingTtlSeconds`, and the
 * states of older rolling rows deleted, except `parentStatePath` (a retry of this step starts from it) and any
 * state a non-rolling row names.
 */
export async function saveRollingCheckpoint(settings: RunSettings, step: number, statePath: string, parentStatePath: string): Promise<void> {
  const every = settings.rollingSaveEvery ?? 0;
  if (every <= 0 || step % every !== 0 || (settings.saveEvery > 0 && step % settings.saveEvery === 0)) return;
  const name = String(step).padStart(6, '0');
  const rows = await checkpointRows(settings);
  const row = { name, batch: step, state_path: statePath, rolling: true };
  await putRecords(settings, [{ kind: 'checkpoint', step, key: checkpointKey(row), body: pyJsonDumps(row) }]);
  await tinkerFor(settings).setCheckpointTtl(statePath, settings.rollingTtlSeconds);
  await deleteRollingStates(settings, rows, [statePath, parentStatePath]);
}

/** The run's checkpoint rows, from the store (checkpoints.jsonl is their export). */
async function checkpointRows(settings: RunSettings): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const page of recordsAfter(settings, 'checkpoint', 0)) rows.push(...page.map((r) => parsePyJsonLine(r.body) as Record<string, unknown>));
  return rows;
}

async function deleteRollingStates(settings: RunSettings, rows: Record<string, unknown>[], keep: string[]): Promise<void> {
  const named = new Set(rows.filter((r) => !r.rolling).map((r) => r.state_path));
  const rolling = rows.filter((r) => r.rolling && typeof r.state_path === 'string').slice(-ROLLING_LOOKBACK);
  for (const r of rolling) {
    const p = r.state_path as string;
    if (keep.includes(p) || named.has(p)) continue;
    await tinkerFor(settings)
      .deleteCheckpoint(p)
      .catch((err: unknown) => {
        if (!(err instanceof TinkerApiError && err.status === 404)) throw err;
      });
  }
}
