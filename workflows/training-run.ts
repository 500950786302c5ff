// The seed's batch loop (do_sync_training) as a Temporal workflow. Each batch:
//   publishPolicy → runEvaluation (every evalEvery) → collectRollouts → trainStep → saveCheckpoint (every saveEvery)
//   → logMetrics
// Durable state is the PolicyState (trainer paths) and the batch index; a worker crash costs an activity retry.
// Continues as new when Temporal suggests it, carrying that state under the same workflow id.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
  ApplicationFailure,
} from '@temporalio/workflow';
import type { TraceEvent, TrainingActivities } from '../activities/types';
import type { RunConfigInput } from '../config/run-config';
import { parseRunChanges, type RunChanges } from '../config/run-changes';
import { checkpointUpdate, configureUpdate, pauseSignal, progressQuery, resumeSignal, stopUpdate } from './messages';
import type { CarriedState, CheckpointSaved, ConfigureResult, Metrics, Phase, PolicyState, Progress, RunSettings, TrainingRunInput, TrainingRunResult } from './run-types';
import { BATCH, EVAL_REWARD, MODEL_NAME, PHASE, RUN_NAME, TRAIN_REWARD } from './search-attributes';

// Quick bookkeeping: retried until it works, each attempt short.
const BOOKKEEPING = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;
// Talks to the trainer (model creation, loading a checkpoint): may wait on a busy service.
const TRAINER = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;
// Rollouts wait on agents; they heartbeat progress and resume from it on retry.
const ROLLOUTS = {
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;

/**
 * The three kinds of activity stub. A worker that dies mid-activity is only noticed when its heartbeat times out,
 * so `activityHeartbeatTimeoutSeconds` (when set) shortens that wait for every kind; all our activities heartbeat
 * well within 5 s while they work.
 */
function activityStubs(heartbeatSeconds: number | null | undefined) {
  const hb = heartbeatSeconds ? { heartbeatTimeout: `${heartbeatSeconds} seconds` as const } : {};
  return {
    bookkeeping: proxyActivities<TrainingActivities>({ ...BOOKKEEPING, ...hb }),
    trainer: proxyActivities<TrainingActivities>({ ...TRAINER, ...hb }),
    rollouts: proxyActivities<TrainingActivities>({ ...ROLLOUTS, ...hb }),
  };
}

/** The CLI passes the config file as it is; the client wraps it with carried state. Both are accepted. */
function unwrap(input: TrainingRunInput | RunConfigInput): TrainingRunInput {
  return typeof input === 'object' && input !== null && 'config' in input ? (input as TrainingRunInput) : { config: input as RunConfigInput };
}

const checkpointName = (step: number) => String(step).padStart(6, '0');

export async function trainingRun(rawInput: TrainingRunInput | RunConfigInput): Promise<TrainingRunResult> {
  const input = unwrap(rawInput);
  const { config } = input;
  const carried = input.carried;
  let runName = '';

  let phase: Phase = 'starting';
  let paused = carried?.paused ?? false;
  let stopRequested = false;
  let stopped = false;
  let batch = carried?.nextBatch ?? 0;
  let numBatches = 0;
  let lastMetrics: Metrics = carried?.lastMetrics ?? {};
  let policy: PolicyState | undefined = carried?.policy;
  let finalCheckpoint: string | null = null;
  // Settings changed by `configure`: applied over the config at the start of each batch.
  let changes: RunChanges = carried?.changes ?? {};
  const startedAtMs = carried?.startedAtMs ?? Date.now();
  let batchStartedAtMs = Date.now();
  let batchesDone = 0;
  let batchSecondsTotal = 0;

  setHandler(pauseSignal, () => {
    paused = true;
  });
  setHandler(resumeSignal, () => {
    paused = false;
  });
  setHandler(progressQuery, (): Progress => ({
    runName,
    batch,
    numBatches,
    phase,
    paused,
    stopRequested,
    lastMetrics,
    policyStep: policy?.step ?? 0,
    startedAtMs,
    batchStartedAtMs,
    secondsPerBatch: batchesDone > 0 ? batchSecondsTotal / batchesDone : null,
    changes,
  }));
  setHandler(stopUpdate, async (req) => {
    if (!stopRequested) log.info('stop requested', { reason: req?.reason ?? '' });
    stopRequested = true;
    paused = false; // a paused run stops at once
    await condition(() => stopped);
    return { stoppedAfterBatch: batch, finalCheckpoint };
  });

  // Set once the config is validated: what the checkpoint update needs to write a row.
  let recorder: { settings: RunSettings; saveCheckpoint: TrainingActivities['saveCheckpoint'] } | undefined;
  setHandler(
    checkpointUpdate,
    async (): Promise<CheckpointSaved> => {
      const at = policy!;
      const name = checkpointName(at.step);
      log.info('checkpoint requested', { name });
      await recorder!.saveCheckpoint(recorder!.settings, name, at.step, at, false);
      return { name, batch: at.step, statePath: at.statePath, samplerPath: at.samplerPath };
    },
    {
      // Rejected updates leave no trace in history.
      validator: () => {
        if (!policy || !recorder) throw new Error('the run has no trained policy yet: try again once its first batch has started');
        if (stopRequested || stopped) throw new Error('the run is stopping or has ended: its final checkpoint holds the latest policy');
      },
    },
  );

  setHandler(
    configureUpdate,
    (input): ConfigureResult => {
      changes = { ...changes, ...parseRunChanges(input) };
      // Waiting at the top of the loop (paused, or not yet in it), the batch it waits to start gets them.
      const appliesFromBatch = phase === 'paused' || phase === 'starting' ? batch : batch + 1;
      log.info('settings changed', { changes, appliesFromBatch });
      return { appliesFromBatch, changes };
    },
    {
      validator: (input) => {
        if (!recorder) throw new Error('the run is still starting: try again once its config is validated');
        if (stopRequested || stopped) throw new Error('the run is stopping or has ended');
        parseRunChanges(input);
      },
    },
  );

  const setPhase = (p: Phase) => {
    phase = p;
    upsertSearchAttributes([{ key: PHASE, value: p }]);
    setCurrentDetails(currentDetails());
  };
  // What the UI shows under "Current details" (markdown; not part of history).
  const currentDetails = () => {
    const m = lastMetrics;
    const f = (k: string) => (m[k] === undefined ? '-' : Number(m[k]).toFixed(3));
    return [
      `**${runName || 'run'}**: batch ${Math.min(batch + 1, numBatches)} of ${numBatches}, ${paused ? 'paused' : phase}${stopRequested ? ' (stopping)' : ''}`,
      `last batch: train reward ${f('env/all/reward/total')}, eval reward ${f('test/env/all/reward/total')}, ${f('time/total')} s`,
      `policy step ${policy?.step ?? 0}${policy ? `: \`${policy.samplerPath}\`` : ''}`,
      ...(Object.keys(changes).length ? [`configured: ${Object.entries(changes).map(([k, v]) => `${k}=${v}`).join(', ')}`] : []),
    ].join('\n\n');
  };

  // Validates the config (every problem at once) and snapshots the dataset; a bad config fails the run here.
  const prepared = await activityStubs(null).bookkeeping.prepareRun(config);
  const configured: RunSettings = { ...prepared.settings, instanceId: workflowInfo().firstExecutionRunId };
  let settings: RunSettings = { ...configured, ...changes };
  const { bookkeeping, trainer, rollouts } = activityStubs(settings.activityHeartbeatTimeoutSeconds);
  runName = settings.runName;
  numBatches = prepared.numBatches;
  recorder = { settings: configured, saveCheckpoint: bookkeeping.saveCheckpoint };
  upsertSearchAttributes([
    { key: RUN_NAME, value: runName },
    { key: MODEL_NAME, value: settings.modelName },
  ]);
  if (numBatches === 0) {
    throw ApplicationFailure.nonRetryable(
      `the training set gives no batch (batchSize ${settings.datasetBuilder.batchSize}; ${prepared.note ?? 'check the dataset'})`,
      'EmptyDataset',
    );
  }
  policy ??= await trainer.initPolicy(settings, batch);
  upsertMemo({ numBatches, logPath: settings.logPath });

  const traceEvents: TraceEvent[] = [];
  const timed = async <T>(name: string, fn: () => Promise<T>, metrics: Metrics): Promise<T> => {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      const seconds = (Date.now() - t0) / 1000;
      metrics[`time/${name}`] = seconds;
      if (settings.enableTrace) traceEvents.push({ name, ph: 'X', ts: t0 * 1000, dur: seconds * 1e6, pid: 1, tid: 1, args: { batch } });
    }
  };

  const startBatch = batch;
  for (; batch < numBatches; batch++) {
    if (paused) {
      setPhase('paused');
      await condition(() => !paused);
    }
    if (stopRequested) break;
    settings = { ...configured, ...changes };

    batchStartedAtMs = Date.now();
    traceEvents.length = 0;
    const metrics: Metrics = {
      'progress/batch': batch,
      'optim/lr': settings.learningRate,
      'progress/done_frac': (batch + 1) / numBatches,
    };
    const current: PolicyState = policy;

    if (settings.evalEvery > 0 && batch % settings.evalEvery === 0) {
      setPhase('evaluating');
      const evalMetrics = await timed(
        'run_evals',
        async () => {
          const resourcesId = await bookkeeping.publishPolicy(settings, batch, 'eval', current);
          return rollouts.runEvaluation(settings, batch, resourcesId, prepared.datasetSha256);
        },
        metrics,
      );
      Object.assign(metrics, evalMetrics);
      const evalReward = evalMetrics['test/env/all/reward/total'];
      if (evalReward !== undefined && Number.isFinite(evalReward)) upsertSearchAttributes([{ key: EVAL_REWARD, value: evalReward }]);
    }

    setPhase('publishing policy');
    const resourcesId = await bookkeeping.publishPolicy(settings, batch, 'train', current);

    setPhase('collecting rollouts');
    const collected = await timed('sample', () => rollouts.collectRollouts(settings, batch, resourcesId, prepared.datasetSha256), metrics);

    setPhase('training');
    const stepResult = await timed('train', () => trainer.trainStep(settings, batch, collected, current), metrics);
    Object.assign(metrics, stepResult.metrics);
    policy = stepResult.state;

    if (settings.saveEvery > 0 && (batch + 1) % settings.saveEvery === 0) {
      setPhase('checkpointing');
      await timed('save_checkpoint', () => bookkeeping.saveCheckpoint(settings, checkpointName(batch + 1), batch + 1, policy!, false), metrics);
    }

    metrics['time/total'] = (Date.now() - batchStartedAtMs) / 1000;
    setPhase('logging');
    await bookkeeping.logMetrics(settings, batch, metrics, settings.enableTrace ? [...traceEvents] : []);
    lastMetrics = metrics;
    batchesDone++;
    batchSecondsTotal += metrics['time/total'];

    const trainReward = metrics['env/all/reward/total'];
    upsertSearchAttributes([
      { key: BATCH, value: batch + 1 },
      ...(trainReward !== undefined && Number.isFinite(trainReward) ? [{ key: TRAIN_REWARD, value: trainReward }] : []),
    ]);
    log.info('batch done', { batch, reward: trainReward ?? null, seconds: metrics['time/total'] });

    // Continue as new between batches, never with a stop pending (its caller waits on this run).
    if (workflowInfo().continueAsNewSuggested && !stopRequested && batch + 1 < numBatches) {
      await condition(allHandlersFinished);
      const next: CarriedState = { nextBatch: batch + 1, policy, paused, lastMetrics, startedAtMs, ...(Object.keys(changes).length ? { changes } : {}) };
      await continueAsNew<typeof trainingRun>({ config, carried: next });
    }
  }

  const stoppedEarly = batch < numBatches;
  if (startBatch < numBatches) {
    setPhase('saving final checkpoint');
    finalCheckpoint = checkpointName(batch);
    await bookkeeping.saveCheckpoint(settings, stoppedEarly ? finalCheckpoint : 'final', batch, policy, true);
    if (!stoppedEarly) finalCheckpoint = 'final';
  }
  setPhase(stoppedEarly ? 'stopped' : 'done');
  stopped = true;
  // Let a waiting stop update see `stopped` and reply before the run completes.
  await condition(allHandlersFinished);
  return { runName, batchesCompleted: batch, numBatches, finalCheckpoint, stoppedEarly, lastMetrics };
}
