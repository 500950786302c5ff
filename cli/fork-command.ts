// `client fork <run> --from-step K [--name N] [--set key=value ...]`: a new run whose config is the parent's as it
// was started, plus `forkOf` (the parent's records key and K) and the changes asked for. The fork starts from the
// parent's state after step K (activities/fork-state.ts); the parent is only read.
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { validateRunConfig } from '../config/load';
import { runNameOf, type RunConfig, type RunConfigInput } from '../config/run-config';
import type { TrainingRunInput } from '../shared/run-types';
import type { trainingRun } from '../workflows/training-run';
import { CommandError } from './mistakes';

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
