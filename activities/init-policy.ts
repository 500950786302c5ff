import { heartbeat } from '@temporalio/activity';
import type { PolicyState, RunSettings } from '../workflows/run-types';
import { markAt } from './policy-client';
import { tinkerFor } from './services';
import { readStepRecord, writeStepRecord } from './step-records';

const INITIAL = 'initial';

/**
 * Creates the model to train (LoRA of `modelName`, seeded from the dataset seed so reruns start identical),
 * loads `loadCheckpointPath` if given (weights only, as the seed's load_state), and saves the starting state and
 * sampler. Idempotent: a retry returns what the first attempt saved.
 */
export async function initPolicy(settings: RunSettings, startStep: number): Promise<PolicyState> {
  const existing = readStepRecord(settings.logPath, startStep, INITIAL);
  if (existing) return existing.state;
  const service = tinkerFor(settings);
  heartbeat('creating model');
  const tc = await service.createLoraTrainingClient(settings.modelName, { rank: settings.loraRank, seed: settings.datasetBuilder.seed });
  if (settings.loadCheckpointPath) {
    heartbeat('loading checkpoint');
    await tc.loadState(settings.loadCheckpointPath);
  }
  const name = String(startStep).padStart(6, '0');
  const statePath = await tc.saveState(name);
  const samplerPath = await tc.saveWeightsForSampler(name);
  const state: PolicyState = { modelId: tc.modelId, statePath, samplerPath, step: startStep };
  markAt(settings.runName, tc, statePath);
  writeStepRecord(settings.logPath, startStep, { parentStatePath: INITIAL, result: { state, metrics: {}, skipped: false } });
  return state;
}
