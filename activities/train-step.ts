import { Context, heartbeat, log } from '@temporalio/activity';
import { withHeartbeats } from './keep-alive';
import {
  computeKlSampleTrain,
  computePostKl,
  fullSequence,
  incorporateKlPenalty,
  prepareTrainingBatch,
  removeMask,
  splitIntoSubsteps,
  servedStalenessMetrics,
  type Datum,
} from '../rl';
import { isSendable } from '../rl/sendable';
import { sequenceChunks } from '../rl/datums';
import type { Datum as TinkerDatum } from '../tinker';
import { refusedByTrainer } from './unfixable';
import { missingRewardNote } from '../shared/missing-rewards';
import type { CollectedBatch, Metrics, PolicyState, RunSettings, TrainStepResult } from '../shared/run-types';
import { exclusivelyFor, markAt, markDirty, trainingClientAt } from './policy-client';
import { storeFor, tinkerFor } from './services';
import { commitStepRecord, readStepRecord } from './step-records';
import { buildTrajectoryGroups } from './trajectories';
import { groupsOf } from './batch-ref';
import { faultPoint } from '../common/fault-points';
import { retireSuperseded, saveRollingCheckpoint, stepCheckpointName } from './checkpoint-lifetimes';
import { trainSubsteps } from './train-substeps';
import { mapConcurrent } from '../common/concurrent-map';

/**
 * Per-datum logprob calls (KL reference, post-update KL) in flight at once: gathered, as the cookbook gathers them,
 * but bounded so that a 4,096-datum batch does not open 4,096 requests on the trainer at once.
 */
const LOGPROB_CONCURRENCY = 32;

const seconds = (t0: number) => (performance.now() - t0) / 1000;

/**
 * The datum as the trainer takes it: without `mask` (the cookbook strips it; advantages already zero there); a
 * vision prompt's images as image chunks at their positions.
 */
function toWire(d: Datum): TinkerDatum {
  const { modelInput, lossFnInputs, images } = removeMask(d);
  const out: TinkerDatum = { modelInput, lossFnInputs: { ...lossFnInputs } };
  if (images?.length) out.chunks = sequenceChunks(modelInput, images);
  return out;
}

/**
 * The cookbook's do_train_step_and_get_sampling_client: the batch's spans → trajectories → advantages → datums
 * (→ KL penalty) → forward_backward + optim_step per substep → save state and sampler → metrics.
 *
 * Exactly once: the step starts from the saved parent state (reloaded unless this process holds it untouched)
 * and is committed by a record written after the new state is saved. A retry finds the record and returns it,
 * or, finding none, starts over from the parent state, so a half-applied step is never built upon.
 */
export async function trainStep(settings: RunSettings, batch: number, collected: CollectedBatch, policy: PolicyState): Promise<TrainStepResult> {
  // Heartbeats also while waiting for an earlier attempt still running in this process.
  return withHeartbeats('train step', exclusivelyFor(settings.runName, () => trainStepAlone(settings, batch, collected, policy)));
}

async function trainStepAlone(settings: RunSettings, batch: number, collected: CollectedBatch, policy: PolicyState): Promise<TrainStepResult> {
  const step = policy.step + 1;
  const committed = await readStepRecord(settings, step, policy.statePath);
  if (committed) {
    // An attempt that committed may have died before retiring the parent: do it (again; idempotent).
    if (!committed.skipped) await retireSuperseded(settings, policy, committed.state);
    return committed;
  }
  const signal = Context.current().cancellationSignal;
  const metrics: Metrics = {};

  let t0 = performance.now();
  const store = storeFor(settings);
  const collectedGroups = await groupsOf(store, collected, signal);
  const { groups, servedSteps, notes } = await buildTrajectoryGroups(store, settings, collectedGroups, signal);
  Object.assign(metrics, notes);
  if (settings.async) {
    // Staleness as served (the spans' policy steps), the workflow's labels checked against it.
    const provenance = collectedGroups.map((g, i) => ({ served: servedSteps[i] ?? null, label: g.policyStep }));
    const served = servedStalenessMetrics(policy.step, provenance, settings.async.maxStepsOffPolicy);
    Object.assign(metrics, served.metrics);
    for (const m of served.mislabelled) log.error(`batch ${batch}: a group sampled from another policy than it was started under: ${m}`);
  }
  const noReward = missingRewardNote(notes);
  if (noReward) log.warn(`batch ${batch}: ${noReward}`);
  const prepared = prepareTrainingBatch(groups, { removeConstantRewardGroups: settings.removeConstantRewardGroups });
  Object.assign(metrics, prepared.metrics);
  metrics['time/assemble_training_data'] = seconds(t0);
  heartbeat('prepared');

  // Nothing to learn from: the policy stays as it is (the seed would crash here instead).
  const skip = (reason: string) => {
    log.warn(`batch ${batch} skipped, weights unchanged: ${reason}`);
    const result: TrainStepResult = { state: { ...policy, step }, metrics, skipped: true, skipReason: reason };
    return commitStepRecord(settings, step, { parentStatePath: policy.statePath, result, ...groupKeysOf(collected) });
  };
  if (prepared.skip) return skip(prepared.reason);

  let data: Datum[] = prepared.data;
  const service = tinkerFor(settings);
  if (settings.klPenaltyCoef > 0) {
    t0 = performance.now();
    // The cookbook's kl_reference_config: another base model, or saved weights on it; default the run's base model.
    const ref = settings.klReferenceModel ?? null;
    const base = await service.createSamplingClient(
      ref ? { baseModel: ref.baseModel, ...(ref.loadCheckpointPath ? { modelPath: ref.loadCheckpointPath } : {}) } : { baseModel: settings.modelName },
    );
    const reference = await mapConcurrent(data, LOGPROB_CONCURRENCY, (d) => base.computeLogprobs(fullSequence(d)));
    const kl = incorporateKlPenalty(data, reference, settings.klPenaltyCoef, settings.klDiscountFactor);
    data = kl.data;
    Object.assign(metrics, kl.metrics);
    metrics['time/kl_vs_base'] = seconds(t0);
  }
  // The last check before the wire: a datum with a number float32 cannot hold would make the trainer refuse all.
  const sendable = data.filter(isSendable);
  metrics['train/dropped_datums_unsendable'] = data.length - sendable.length;
  if (sendable.length === 0) return skip('no datum survives float32 (advantages or logprobs beyond ±3.4e38)');
  data = sendable;

  const tc = await withHeartbeats('loading parent state', trainingClientAt(settings, policy));
  markDirty(settings.runName);
  t0 = performance.now();
  const name = stepCheckpointName(step);
  // The step's state and sampler saves are submitted right behind the last optim_step, before any result is read:
  // they take the seq_ids after it, so the service runs them on the updated weights, in the same pass as the
  // forward_backward and optim_step where it can, rather than one pass and one client round trip each. Nothing
  // commits the step but its record, written below only once both saves are in: a retry that finds no record
  // starts over from the parent state (whatever of this attempt's saves landed is overwritten under the same name).
  let saves = undefined as StepSaves | undefined;
  const submitSaves = () => {
    // No TTL: this is the state the run resumes from, however long it is paused (checkpoint-lifetimes.ts).
    saves = { state: tc.saveState(name, { ttlSeconds: null }), sampler: tc.saveWeightsForSampler(name, { ttlSeconds: null }) };
    // Handled now: a failed forward_backward throws before they are awaited.
    saves.state.catch(() => undefined);
    saves.sampler.catch(() => undefined);
  };
  let trained;
  try {
    trained = await trainSubsteps(tc, splitIntoSubsteps(data, settings.numSubsteps).map((chunk) => chunk.map(toWire)), {
      lossFn: settings.lossFn,
      lossFnConfig: settings.lossFnConfig ?? undefined,
      adam: { learningRate: settings.learningRate, beta1: 0.9, beta2: 0.95, eps: 1e-8 },
      waitFor: withHeartbeats,
      afterForwardBackward: () => faultPoint('train.after_forward_backward', { run: settings.runName, batch }),
      afterLastSubmit: submitSaves,
    });
  } catch (err) {
    // The trainer refused this batch's data: retrying the same data cannot help. The held model is dirty (an
    // optimizer step may have run), so the next step reloads the parent state: the weights stay as they were.
    const refusal = refusedByTrainer(err);
    if (!refusal) throw err;
    await withHeartbeats('discarding the refused step\'s saves', discardSaves(settings, saves));
    metrics['train/skipped_trainer_refused'] = 1;
    return skip(`the trainer refused the batch's data: ${refusal}`);
  }
  if (!saves) throw new Error('train step: the saves were not submitted with the last substep');
  const trainingLogprobs = trained.trainingLogprobs;
  for (const [k, v] of Object.entries(trained.forwardBackwardMetrics)) metrics[`optim/${k}`] = v;
  // As the cookbook: the last optim_step's metrics (e.g. grad_norm:mean) join the step's, under their own names.
  Object.assign(metrics, trained.optimMetrics);
  metrics['time/train_step'] = seconds(t0);
  t0 = performance.now();
  Object.assign(metrics, computeKlSampleTrain(data, trainingLogprobs));
  metrics['time/compute_kl_sample_train'] = seconds(t0);

  t0 = performance.now();
  const statePath = await withHeartbeats('saving state', saves.state);
  faultPoint('train.after_save_state', { run: settings.runName, batch });
  const samplerPath = await withHeartbeats('saving sampler', saves.sampler);
  await withHeartbeats('saving rolling checkpoint', saveRollingCheckpoint(settings, step, tc, policy.statePath));
  // The cookbook's name for saving the step's state and sampler (here the wait for them after the optim_step's
  // result); the workflow's checkpoint row is time/record_checkpoint.
  metrics['time/save_checkpoint'] = seconds(t0);
  markAt(settings.runName, tc, statePath);

  if (settings.computePostKl) {
    t0 = performance.now();
    const after = await service.createSamplingClient({ modelPath: samplerPath });
    const fresh = await mapConcurrent(data, LOGPROB_CONCURRENCY, (d) => after.computeLogprobs(fullSequence(d)));
    Object.assign(metrics, computePostKl(data, fresh));
    metrics['time/compute_post_kl'] = seconds(t0);
  }

  const result: TrainStepResult = { state: { modelId: tc.modelId, statePath, samplerPath, step }, metrics, skipped: false };
  const standing = await commitStepRecord(settings, step, { parentStatePath: policy.statePath, result, ...groupKeysOf(collected) });
  await retireSuperseded(settings, policy, standing.state);
  return standing;
}

/** A step's state and sampler saves, submitted behind its last optim_step. */
interface StepSaves {
  state: Promise<string>;
  sampler: Promise<string>;
}

/**
 * A refused step's saves, submitted behind its optim_step, may have landed (a dirty model saved under the step's
 * name): deleted, so no unexpiring checkpoint of a step that never committed is left behind. Best effort.
 */
async function discardSaves(settings: RunSettings, saves: StepSaves | undefined): Promise<void> {
  if (!saves) return;
  for (const r of await Promise.allSettled([saves.state, saves.sampler])) {
    if (r.status !== 'fulfilled') continue;
    await tinkerFor(settings)
      .deleteCheckpoint(r.value)
      .catch((err: Error) => log.warn(`could not delete ${r.value}, saved by a refused step: ${err.message}`));
  }
}

/** Async runs name their groups; the step record keeps the names. */
function groupKeysOf(collected: CollectedBatch): { groups?: string[] } {
  const keys = (collected.groups ?? []).flatMap((g) => (g.key ? [g.key] : []));
  return keys.length ? { groups: keys } : {};
}
