// `client fork <run> --from-step K [--name N] [--set key=value ...]`: a new run whose config is the parent's as it
// was started, plus `forkOf` (the parent's records key and K) and the changes asked for. The fork starts from the
// parent's state after step K (activities/fork-state.ts); the parent is only read.
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { checkForkCheckpoint, forkStepState } from '../activities/fork-state';
import { ConfigError } from '../config/errors';
import { validateRunConfig } from '../config/load';
import { runNameOf, type RunConfig, type RunConfigInput } from '../config/run-config';
import { checkTrainer } from '../config/trainer-check';
import type { RunSettings, TrainingRunInput } from '../shared/run-types';
import type { trainingRun } from '../workflows/training-run';
import { datasetCheck } from './config-check';
import { CommandError } from './mistakes';
import { setTimeout as sleep } from 'node:timers/promises';

/** The parent's config as its current execution was started, and its records key `<runName>@<first run id>`. */
export async function parentOf(handle: WorkflowHandle<typeof trainingRun>): Promise<{ config: RunConfigInput; runKey: string }> {
  const history = await handle.fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (!started || !payload) throw new CommandError(`run ${handle.workflowId}: its history has no start input to fork from`);
  const input = defaultPayloadConverter.fromPayload<TrainingRunInput | RunConfigInput>(payload);
  const config = typeof input === 'object' && input !== null && 'config' in input ? (input as TrainingRunInput).config : (input as RunConfigInput);
  const first = started.firstExecutionRunId || (await handle.describe()).runId;
  const name = runNameOf(validateRunConfig(config as RunConfigInput, 'the parent run config'));
  return { config, runKey: `${name}@${first}` };
}

/**
 * The fork's config: the parent's, named `name` (default `<parent>-fork<K>`) with its files in a sibling of the
 * parent's logPath, `forkOf` set, and `changes` (top-level fields, JSON values) over it. Validated like a start.
 */
export function forkConfig(parent: RunConfigInput, parentKey: string, step: number, name: string | undefined, changes: Record<string, unknown>): RunConfig {
  const parentCfg = validateRunConfig(parent, 'the parent run config');
  const runName = name ?? `${runNameOf(parentCfg)}-fork${step}`;
  for (const key of ['forkOf', 'runName'] as const) {
    if (key in changes) throw new CommandError(`--set ${key} is not allowed (${key === 'runName' ? 'give --name' : 'give --from-step'})`);
  }
  const logPath = path.join(path.dirname(parentCfg.logPath.replace(/\/+$/, '')), runName);
  // A sweep child's holds are its sweep's to lift: a fork has no sweep to resume it.
  const { pauseBeforeBatches: _holds, ...own } = parent as RunConfigInput & { pauseBeforeBatches?: number[] };
  return validateRunConfig({ ...own, ...changes, runName, logPath, forkOf: { run: parentKey, step } } as RunConfigInput, 'fork config');
}

/** `--from-step` as a step number (0 = the parent's initial state). */
export function parseForkStep(text: string | undefined): number {
  if (text === undefined) throw new CommandError('needs --from-step K (the parent step whose state the fork starts from)');
  const step = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(step)) throw new CommandError(`--from-step must be a whole number of steps, got ${JSON.stringify(text)}`);
  return step;
}

/**
 * Before the fork starts: what its workflow would fail on at once, checked from here as the worker checks it (the
 * parent's memo, the fork's tasks, the parent's step records in the store, the checkpoint and the model on the
 * trainer). A refusal is a CommandError naming the reason; what the client cannot reach (the store, the trainer) is
 * a note, since the worker may reach it, and the run checks again when it starts.
 */
export async function checkForkStart(parent: WorkflowHandle<typeof trainingRun>, cfg: RunConfig, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const forkOf = cfg.forkOf!;
  const refuse = (why: string) => new CommandError(`--from-step ${forkOf.step}: ${why}; nothing started`);
  const memo = ((await parent.describe()).memo ?? {}) as { numBatches?: unknown; async?: unknown };
  if (typeof memo.numBatches === 'number' && forkOf.step > memo.numBatches) {
    throw refuse(`run ${parent.workflowId} has ${memo.numBatches} steps, so its last state is after step ${memo.numBatches}`);
  }
  // The worker's overrides (AGL_STORE_URL, TINKER_BASE_URL) say the same in the client's environment.
  const baseUrl = env.TINKER_BASE_URL || cfg.baseUrl;
  const settings = { ...cfg, runName: runNameOf(cfg), storeAddress: env.AGL_STORE_URL || cfg.storeAddress, baseUrl } as unknown as RunSettings;
  const refused = (err: unknown) => {
    if (err instanceof ConfigError) return refuse(err.problems.map((p) => p.replace(/^forkOf\.\w+: /, '')).join('; '));
    return null;
  };
  const notes: string[] = [];
  let origin: Awaited<ReturnType<typeof forkStepState>> | undefined;
  try {
    origin = await forkStepState(settings, forkOf);
  } catch (err) {
    const r = refused(err);
    if (r) throw r;
    notes.push(`the parent's steps were not checked (the store at ${settings.storeAddress}: ${(err as Error).message.split('\n')[0]}); the run checks when it starts`);
  }
  const dataset = datasetCheck(cfg);
  if (dataset.problems.length > 0) throw refuse(dataset.problems.join('; '));
  if (dataset.batches !== undefined && forkOf.step > dataset.batches) throw refuse(`the fork's training set gives ${dataset.batches} batches, none after step ${forkOf.step}`);
  const trainer = await checkTrainer(cfg, { baseUrl, env, timeoutMs: 10_000 });
  if (trainer.problems.length > 0) throw refuse(trainer.problems.join('; '));
  if (trainer.unreachable) notes.push(`${trainer.unreachable} (not checked, nor the parent's checkpoint there; the run checks when it starts)`);
  else if (origin) {
    const timeout = sleep(15_000, 'timeout' as const, { ref: false });
    try {
      const { parentRun, state } = origin;
      const r = await Promise.race([checkForkCheckpoint(settings, parentRun, forkOf.step, state), timeout]);
      if (r === 'timeout') notes.push(`the trainer did not say within 15 s whether ${state.statePath} is kept; the run checks when it starts`);
    } catch (err) {
      const r = refused(err);
      if (r) throw r;
      notes.push(`the parent's checkpoint ${origin!.state.statePath} was not checked (${(err as Error).message.split('\n')[0]}); the run checks when it starts`);
    }
  }
  return notes;
}
