// Where a fork starts: the parent run's state after step K, found from the parent's step records in the store
// (step-records.ts) and checked on the trainer before anything is made. A parent that is still running is only
// read, never written, so forking it does not disturb it.
import type { StepRecord } from './step-records';
import type { PolicyState, RunSettings } from '../shared/run-types';
import { ConfigError } from '../config/errors';
import { TinkerApiError } from '../tinker/errors';
import { storeFor, tinkerFor } from './services';

export interface ForkOrigin {
  /** The parent's records key, `<runName>@<instance>`. */
  parentRun: string;
  step: number;
  /** The parent's state after `step` optimizer steps: weights and optimizer state. */
  state: PolicyState;
}

const refuse = (problem: string) => new ConfigError('fork', [problem]);

/** The parent's records key for a name (its only instance in the store) or a `<runName>@<instance>` as given. */
export async function parentRunKey(settings: RunSettings, run: string): Promise<string> {
  const runs = [...new Set((await storeFor(settings).runsWithRecords()).map((r) => r.run))];
  if (runs.includes(run) && run.includes('@')) return run;
  const named = runs.filter((r) => r.startsWith(`${run}@`));
  if (named.length === 1) return named[0]!;
  if (named.length === 0) throw refuse(`forkOf.run: the store at ${storeFor(settings).baseUrl} holds no run ${run}`);
  throw refuse(`forkOf.run: the store holds ${named.length} runs named ${run} (${named.join(', ')}); name one as <runName>@<instance>`);
}

/**
 * The parent's state after `step` optimizer steps: the last committed step record whose state is that step (step 0:
 * its initial state), refused with the reason when there is none or its checkpoint is gone from the trainer.
 */
export async function forkOrigin(settings: RunSettings, forkOf: { run: string; step: number }): Promise<ForkOrigin> {
  const { parentRun, state } = await forkStepState(settings, forkOf);
  await checkForkCheckpoint(settings, parentRun, forkOf.step, state);
  return { parentRun, step: forkOf.step, state };
}

/** The parent's committed state after `forkOf.step`, from the store alone (the client checks a fork with it too). */
export async function forkStepState(settings: RunSettings, forkOf: { run: string; step: number }): Promise<{ parentRun: string; state: PolicyState }> {
  const parentRun = await parentRunKey(settings, forkOf.run);
  const store = storeFor(settings);
  let found: StepRecord | undefined;
  let lastStep = -1;
  for (let seq = 0; ; ) {
    const page = await store.runRecords(parentRun, { kind: 'step', after_seq: seq, limit: 1000 });
    for (const rec of page) {
      const body = JSON.parse(rec.body) as StepRecord;
      lastStep = Math.max(lastStep, body.result.state.step);
      if (body.result.state.step === forkOf.step) found = body;
    }
    if (page.length < 1000) break;
    seq = page[page.length - 1]!.seq;
  }
  if (!found) {
    const has = lastStep < 0
      ? 'it has no committed steps'
      : lastStep > forkOf.step
        ? `its last committed step is ${lastStep}; with retainSteps, only the last steps and those a checkpoint names stay forkable`
        : `its last committed step is ${lastStep}`;
    throw refuse(`forkOf.step: run ${parentRun} has no state after step ${forkOf.step} (${has})`);
  }
  return { parentRun, state: found.result.state };
}

/** Refuses a fork whose parent checkpoint is gone from the trainer; a trainer that is down or starting is thrown as is. */
export async function checkForkCheckpoint(settings: RunSettings, parentRun: string, step: number, state: PolicyState): Promise<void> {
  try {
    await tinkerFor(settings).weightsInfo(state.statePath);
  } catch (err) {
    if (err instanceof TinkerApiError && err.isUserError) {
      throw refuse(`forkOf.step: the checkpoint of run ${parentRun} after step ${step} (${state.statePath}) is gone from the trainer (expired or deleted: ${err.body.slice(0, 200)}); fork from a step whose checkpoint is kept, e.g. a saveEvery or final one`);
    }
    throw err; // the trainer is down or starting: retried
  }
}
