// The seed's batch loop (do_sync_training). Each batch:
//   publishPolicy → runEvaluation (every evalEvery) → collectRollouts → trainStep → saveCheckpoint (every saveEvery)
//   → logMetrics
// Every batch waits for its slowest rollout; the proxy drains and switches between batches.
import { condition, upsertSearchAttributes } from '@temporalio/workflow';
import type { TraceEvent } from '../activities/types';
import type { ActivityStubs } from './activity-stubs';
import { checkpointName, type RunControl } from './run-control';
import type { Metrics, PolicyState, RunSettings, TrainingRunInput } from '../shared/run-types';
import { EVAL_REWARD } from '../shared/search-attributes';

export interface LoopContext {
  config: TrainingRunInput['config'];
  datasetSha256: string;
  stubs: ActivityStubs;
}

/** Evaluates `policy` on the validation set into `metrics` (shared by both loops). */
export async function evaluate(run: RunControl, ctx: LoopContext, settings: RunSettings, at: number, policy: PolicyState, metrics: Metrics, trace: TraceEvent[] | null): Promise<void> {
  run.setPhase('evaluating');
  const evalMetrics = await run.timed(
    'run_evals',
    async () => {
      const resourcesId = await ctx.stubs.bookkeeping.publishPolicy(settings, at, 'eval', policy);
      return ctx.stubs.rollouts.runEvaluation(settings, at, resourcesId, ctx.datasetSha256);
    },
    metrics,
    trace,
  );
  Object.assign(metrics, evalMetrics);
  const evalReward = evalMetrics['test/env/all/reward/total'];
  if (evalReward !== undefined && Number.isFinite(evalReward)) upsertSearchAttributes([{ key: EVAL_REWARD, value: evalReward }]);
}

/** Runs batches until the last or a stop; returns whether it stopped early. */
export async function syncLoop(run: RunControl, ctx: LoopContext): Promise<{ stoppedEarly: boolean }> {
  const { bookkeeping, trainer, rollouts } = ctx.stubs;
  const numBatches = run.numSteps;
  const traceEvents: TraceEvent[] = [];
  // One step per batch: the run's step N trains batch N.
  for (; run.step < numBatches; run.step++) {
    // A hold the config asks for (a sweep's milestone): only in configs that name one, so other histories replay.
    if (run.settings().pauseBeforeBatches?.includes(run.step) && !run.stopRequested) {
      run.paused = true;
      run.pauseReason = `held before batch ${run.step} (pauseBeforeBatches, e.g. a sweep's milestone): resume lets it go on`;
    }
    if (run.paused) {
      run.setPhase('paused');
      await condition(() => !run.paused);
    }
    if (run.stopRequested) break;
    const settings = run.settings();
    const batch = run.step;
    const trace = settings.enableTrace ? traceEvents : null;

    run.stepStartedAtMs = Date.now();
    traceEvents.length = 0;
    const metrics: Metrics = {
      'progress/batch': batch,
      'optim/lr': settings.learningRate,
      'progress/done_frac': (batch + 1) / numBatches,
    };
    const current: PolicyState = run.policy!;

    if (settings.evalEvery > 0 && batch % settings.evalEvery === 0) await evaluate(run, ctx, settings, batch, current, metrics, trace);

    run.setPhase('publishing policy');
    const resourcesId = await bookkeeping.publishPolicy(settings, batch, 'train', current);

    run.setPhase('collecting rollouts');
    const collected = await run.timed('sample', () => rollouts.collectRollouts(settings, batch, resourcesId, ctx.datasetSha256), metrics, trace);

    run.setPhase('training');
    const stepResult = await run.timed('train', () => trainer.trainStep(settings, batch, collected, current), metrics, trace);
    Object.assign(metrics, stepResult.metrics);
    run.policy = stepResult.state;

    if (settings.saveEvery > 0 && (batch + 1) % settings.saveEvery === 0) {
      run.setPhase('checkpointing');
      await run.timed('record_checkpoint', () => bookkeeping.saveCheckpoint(settings, checkpointName(batch + 1), batch + 1, run.policy!, false), metrics, trace);
    }

    metrics['time/total'] = (Date.now() - run.stepStartedAtMs) / 1000;
    run.setPhase('logging');
    const disk = await bookkeeping.logMetrics(settings, batch, metrics, settings.enableTrace ? [...traceEvents] : []);
    run.stepDone(metrics, stepResult.skipReason, disk);

    await run.maybeContinueAsNew(ctx.config, batch + 1 < numBatches);
  }
  return { stoppedEarly: run.step < numBatches };
}
