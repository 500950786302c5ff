import { log } from '@temporalio/activity';
import type { PolicyState, RunSettings } from '../shared/run-types';
import { withHeartbeats } from './keep-alive';
import { exclusivelyFor, markAt } from './policy-client';
import { tinkerFor, tinkerUrlFor } from './services';
import { ConfigError } from '../config/errors';
import { checkTrainer } from '../config/trainer-check';
import { commitStepRecord, readStepRecord } from './step-records';
import { forkOrigin } from './fork-state';
import { stepCheckpointName } from './checkpoint-lifetimes';

const INITIAL = 'initial';

/**
 * Creates the model to train (LoRA of `modelName`, seeded from the dataset seed so reruns start identical),
 * loads `loadCheckpointPath` if given (weights only, as the seed's load_state), and saves the starting state and
 * sampler; a fork (settings.forkOf) starts from its parent's state instead. Idempotent: a retry returns what the first attempt saved.
 */
export async function initPolicy(settings: RunSettings, startStep: number): Promise<PolicyState> {
  return withHeartbeats('creating the policy', exclusivelyFor(settings.runName, () => initPolicyAlone(settings, startStep)));
}

async function initPolicyAlone(settings: RunSettings, startStep: number): Promise<PolicyState> {
  // Before anything else: is there the credential the trainer needs, does it serve the model? A mistake there is a
  // ConfigError, which fails the run at once with the field (unfixable.ts) instead of retrying, and is said the
  // same way whether or not the store can be reached yet.
  const check = await checkTrainer(settings, { baseUrl: tinkerUrlFor(settings) });
  if (check.problems.length > 0) throw new ConfigError('run config', check.problems);
  if (check.unreachable) throw new Error(check.unreachable); // down or starting: retried
  for (const note of check.notes ?? []) log.info(`run ${settings.runName}: ${note}`);
  const existing = await readStepRecord(settings, startStep, INITIAL);
  if (existing) return existing.state;
  const service = tinkerFor(settings);
  let tc;
  if (settings.forkOf) {
    // A fork: a new model holding the parent's weights and optimizer state after the fork step (fork-state.ts).
    const origin = await forkOrigin(settings, settings.forkOf);
    tc = await withHeartbeats('loading the parent state', service.createTrainingClientFromState(origin.state.statePath, { withOptimizer: true }));
  } else {
    // The first use of a local base model builds it, which can take a minute.
    tc = await withHeartbeats(
      'creating model',
      service.createLoraTrainingClient(settings.modelName, { rank: settings.loraRank, seed: settings.datasetBuilder.seed }),
    );
    const loadPath = settings.loadCheckpointPath;
    if (loadPath) await withHeartbeats('loading checkpoint', tc.loadState(loadPath));
  }
  const name = stepCheckpointName(startStep);
  // No TTL: the run resumes from this state until its first step commits (checkpoint-lifetimes.ts).
  const statePath = await withHeartbeats('saving state', tc.saveState(name, { ttlSeconds: null }));
  const samplerPath = await withHeartbeats('saving sampler', tc.saveWeightsForSampler(name, { ttlSeconds: null }));
  const state: PolicyState = { modelId: tc.modelId, statePath, samplerPath, step: startStep };
  markAt(settings.runName, tc, statePath);
  return (await commitStepRecord(settings, startStep, { parentStatePath: INITIAL, result: { state, metrics: {}, skipped: false } })).state;
}
