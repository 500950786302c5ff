// Fault injection for the chaos tests (test/chaos/): `faultPoint(name, scope)` kills this process with SIGKILL,
// as a crash would, at a precise place inside an activity or a runner; `faultFires(name, scope)` says whether a
// point that does something else (a runner reporting a bad reward) fires now. Inert unless the environment enables it:
//   AGL_FAULT_POINTS  comma-separated point names that may fire here (e.g. train.after_forward_backward)
//   AGL_FAULT_DIR     where the test arms points: <dir>/<run>/<point>.armed holds the batch to fire at
//                     (or "*" for the first time the point is reached); firing renames it to .fired first,
//                     so a point fires at most once per run even though the killed activity is retried.
import { existsSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';

export const FAULT_POINTS = [
  /** trainStep, after forward_backward and before optim_step. */
  'train.after_forward_backward',
  /** trainStep, after the new state is saved on the trainer and before the commit record is written. */
  'train.after_save_state',
  /** saveCheckpoint, holding the run directory's write lock, before its checkpoints.jsonl row is written. */
  'checkpoint.before_record',
  /** collectRollouts, once the batch's rollouts are enqueued and being worked on. */
  'rollouts.waiting',
  /** A runner, after the agent's LLM calls and before its reward and status are reported. */
  'runner.mid_rollout',
  /** A runner reports the reward 1e308 instead of its agent's (not a kill: faultFires). */
  'runner.bad_reward',
] as const;
export type FaultPointName = (typeof FAULT_POINTS)[number];

const enabled = new Set((process.env.AGL_FAULT_POINTS ?? '').split(',').map((s) => s.trim()).filter(Boolean));

/** True (once) when `name` is armed for `scope.run` (at `scope.batch`) and has not fired yet. */
export function faultFires(name: FaultPointName, scope: { run: string; batch: number }): boolean {
  const dir = process.env.AGL_FAULT_DIR;
  if (!dir || !enabled.has(name)) return false;
  const armed = path.join(dir, scope.run, `${name}.armed`);
  if (!existsSync(armed)) return false;
  let at: string;
  try {
    at = readFileSync(armed, 'utf8').trim();
  } catch {
    return false;
  }
  if (at !== '*' && Number(at) !== scope.batch) return false;
  try {
    // Rename first: whoever renames it fires (concurrent runners in one process cannot both fire).
    renameSync(armed, path.join(dir, scope.run, `${name}.fired`));
  } catch {
    return false;
  }
  return true;
}

/** Kills this process when `name` is armed for `scope.run` (at `scope.batch`) and has not fired yet. */
export function faultPoint(name: FaultPointName, scope: { run: string; batch: number }): void {
  if (!faultFires(name, scope)) return;
  process.stderr.write(`[fault] ${name} fired for ${scope.run} batch ${scope.batch}: SIGKILL ${process.pid}\n`);
  process.kill(process.pid, 'SIGKILL');
}
