// A training run as a Temporal workflow: validate the config, create (or carry) the policy, run the synchronous
// loop (sync-loop.ts, the seed's) or the async off-policy one (async-loop.ts, when the config has `async`), then
// save the final checkpoint. Durable state is the PolicyState (trainer paths), the batch or step index and, for
// async runs, the scheduler's state; a worker crash costs an activity retry. Both loops continue as new when
// Temporal suggests it, carrying that state under the same workflow id.
import { allHandlersFinished, CancellationScope, condition, log, patched, setWorkflowOptions, upsertMemo, upsertSearchAttributes, workflowInfo, ApplicationFailure } from '@temporalio/workflow';
import type { RunConfigInput } from '../config/run-config';
import { activityStubs } from './activity-stubs';
import { asyncLoop } from './async-loop';
import type { SchedulerCounts } from './async-scheduler';
import { checkpointName, RunControl } from './run-control';
import type { RunSettings, TrainingRunInput, TrainingRunResult } from '../shared/run-types';
import { FORK_STEP, MODEL_NAME, PARENT_RUN, RUN_NAME } from '../shared/search-attributes';
import { syncLoop } from './sync-loop';

/** The CLI passes the config file as it is; the client wraps it with carried state. Both are accepted. */
function unwrap(input: TrainingRunInput | RunConfigInput): TrainingRunInput {
  return typeof input === 'object' && input !== null && 'config' in input ? (input as TrainingRunInput) : { config: input as RunConfigInput };
}

export async function trainingRun(rawInput: TrainingRunInput | RunConfigInput): Promise<TrainingRunResult> {
  const input = unwrap(rawInput);
  const run = new RunControl(input.carried);
  // A stop past its grace cuts whatever the run waits on (stop-grace.ts): then only the final checkpoint is tried.
  const ended = (await run.grace.run(() => prepareAndTrain(run, input))) ?? (await finalCheckpointAfterCut(run));
  run.setPhase(ended.stoppedEarly ? 'stopped' : 'done');
  run.stopped = true;
  // Let a waiting stop update see `stopped` and reply before the run completes.
  await condition(allHandlersFinished);
  return {
    runName: run.runName,
    batchesCompleted: run.step,
    numBatches: run.numSteps,
    finalCheckpoint: run.finalCheckpoint,
    stoppedEarly: ended.stoppedEarly,
    lastMetrics: run.lastMetrics,
    ...(ended.counts ? { asyncCounts: ended.counts } : {}),
  };
}

// With Worker Versioning (a worker started with a deployment name and build id), a run stays on the build that
// started it: a new build never replays a history the old code wrote, so changing the loop needs no patched() for
// versioned workers. The run moves to the current build when it continues as new (RunControl.maybeContinueAsNew,
// which does so between steps as soon as a new build is current). Declared only on a versioned worker: the server
// refuses a versioning behaviour from an unversioned one (every workflow task would fail).
setWorkflowOptions(() => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'PINNED' } : {}), trainingRun);

/** The async loop with pacing, slots freed after the publish, concurrency, stop cancelling queued rollouts. */
export const ASYNC_PACED = 'async-paced-publish-first';

/** Activities carry the run's fairness key and weight (Temporal task-queue fairness). */
export const FLEET_FAIRNESS = 'fleet-fairness-keys';

type Ended = { stoppedEarly: boolean; counts?: SchedulerCounts };

async function prepareAndTrain(run: RunControl, input: TrainingRunInput): Promise<Ended> {
  const { config, carried } = input;
  // Validates the config (every problem at once) and snapshots the dataset; a bad config fails the run here.
  const prepared = await activityStubs(null).bookkeeping.prepareRun(config);
  const configured: RunSettings = { ...prepared.settings, instanceId: workflowInfo().firstExecutionRunId };
  const isAsync = Boolean(configured.async);
  // Runs started before fairness keys schedule their activities as they did (saved histories replay).
  const fairness = patched(FLEET_FAIRNESS) ? { key: configured.runName, weight: configured.fleetWeight ?? 1 } : undefined;
  const stubs = activityStubs({ ...configured, ...run.changes }.activityHeartbeatTimeoutSeconds, fairness);
  // An async run's progress counts optimizer steps: groupsPerBatch groups each, from every batch's tasks.
  const totalGroups = prepared.numBatches * configured.datasetBuilder.batchSize;
  const numSteps = configured.async ? Math.ceil(totalGroups / configured.async.groupsPerBatch) : prepared.numBatches;
  run.configure(configured, numSteps, stubs.bookkeeping.saveCheckpoint);
  const settings = run.settings();
  upsertSearchAttributes([
    { key: RUN_NAME, value: run.runName },
    { key: MODEL_NAME, value: settings.modelName },
  ]);
  if (prepared.numBatches === 0) {
    throw ApplicationFailure.nonRetryable(
      `the training set gives no batch (batchSize ${settings.datasetBuilder.batchSize}; ${prepared.note ?? 'check the dataset'})`,
      'EmptyDataset',
    );
  }
  // A fork (only in configs that name forkOf, so histories of other runs replay unchanged) starts at its fork step.
  const forkOf = configured.forkOf;
  if (forkOf) {
    if (forkOf.step > prepared.numBatches) {
      throw ApplicationFailure.nonRetryable(`forkOf.step ${forkOf.step} is past this run's last batch (${prepared.numBatches})`, 'InvalidRunConfig');
    }
    if (!carried) run.step = forkOf.step;
    upsertSearchAttributes([
      { key: PARENT_RUN, value: forkOf.run },
      { key: FORK_STEP, value: forkOf.step },
    ]);
  }
  run.policy ??= await stubs.trainer.initPolicy(settings, run.step);
  upsertMemo({ numBatches: numSteps, logPath: settings.logPath, ...(isAsync ? { async: configured.async } : {}), ...(forkOf ? { forkOf } : {}), ...fleetMemo(configured) });

  const startStep = run.step;
  const ctx = { config, datasetSha256: prepared.datasetSha256, stubs };
  // Runs started before pacing and the publish-first fix keep the loop they started with (async-loop.ts, `paced`).
  const ended: Ended = isAsync ? await asyncLoop(run, ctx, totalGroups, carried?.async, patched(ASYNC_PACED)) : await syncLoop(run, ctx);
  const { stoppedEarly } = ended;

  if (isAsync || startStep < run.numSteps) {
    run.setPhase('saving final checkpoint');
    run.finalCheckpoint = checkpointName(run.step);
    await stubs.bookkeeping.saveCheckpoint(run.settings(), stoppedEarly ? run.finalCheckpoint : 'final', run.step, run.policy, true);
    if (!stoppedEarly) run.finalCheckpoint = 'final';
  }
  return ended;
}

/** The run's fleet share settings, for `client list` (only when set, so other runs' memos stay as they were). */
function fleetMemo(s: RunSettings): Record<string, number> {
  return { ...(s.fleetWeight !== undefined && s.fleetWeight !== 1 ? { fleetWeight: s.fleetWeight } : {}), ...(s.maxRolloutsInFlight ? { maxRolloutsInFlight: s.maxRolloutsInFlight } : {}) };
}

/** After a stop cut the run short: the last trained policy's checkpoint row, if it can be written within a minute. */
async function finalCheckpointAfterCut(run: RunControl): Promise<Ended> {
  const policy = run.policy;
  const save = run.checkpointSaver();
  if (policy && save) {
    run.setPhase('saving final checkpoint');
    const name = checkpointName(policy.step);
    try {
      await CancellationScope.withTimeout('1 minute', () => save(name, policy, true));
      run.finalCheckpoint = name;
    } catch (err) {
      log.warn('stop: the final checkpoint could not be recorded', { run: run.runName, checkpoint: name, error: String(err) });
    }
  }
  return { stoppedEarly: true };
}
