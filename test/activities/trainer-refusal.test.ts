// A batch the trainer refuses (here: an agent-side span whose prompt is longer than the model's context, which no
// check before the wire knows about) is skipped with its reason and the weights unchanged, instead of trainStep
// being retried with the same data for ever. The next step then trains from the unchanged parent state.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../../activities';
import { validateRunConfig } from '../../config/load';
import { runNameOf } from '../../config/run-config';
import { rewardSpan } from '../../store/reward-span';
import { buildSpan } from '../../proxy/span';
import type { TrainerServer } from '../../trainer/server/server';
import type { CollectedBatch, RunSettings } from '../../shared/run-types';
import { runActivity } from '../helpers/activity-bench';
import { startTestStore, type TestStore } from '../store/helpers';
import { startTestTrainer, TEST_MODEL } from '../tinker/helpers';

const scratch = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-refusal-'));
let trainer: TrainerServer;
let store: TestStore;
before(async () => {
  [trainer, store] = await Promise.all([startTestTrainer({ dataDir: path.join(scratch, 'trainer'), port: 0 }), startTestStore()]);
});
after(async () => {
  await trainer?.close();
  await store?.close();
});

/** A succeeded rollout with one LLM call of `promptLength` prompt tokens and a reward. */
async function rollout(promptLength: number, reward: number): Promise<string> {
  const r = await store.client.startRollout('t', { workerId: 'w' });
  const logprob = { token: 'a', bytes: [97], logprob: -1, top_logprobs: [] };
  const call = buildSpan({
    rolloutId: r.rollout_id, attemptId: r.attempt.attempt_id, sequenceId: 1, startTime: 1, endTime: 2,
    call: { api: 'chat', model: TEST_MODEL, messages: [{ role: 'user', content: 'x' }], traceId: undefined, spanAttributes: undefined } as never,
    sampling: { temperature: 1, topP: 1, topK: -1, maxTokens: 8, n: 1, stream: false }, policy: null, error: null,
    answer: { id: `c-${r.rollout_id}`, model: TEST_MODEL, created: 1, promptTokenIds: Array.from({ length: promptLength }, (_, i) => 97 + (i % 20)),
      choices: [{ index: 0, message: { role: 'assistant', content: 'abc' }, finishReason: 'stop', stopSequence: null, tokenIds: [97, 98, 99], logprobs: [logprob, logprob, logprob] }] },
  });
  await store.client.addSpan(call);
  await store.client.addSpan(rewardSpan(r.rollout_id, r.attempt.attempt_id, 2, reward));
  await store.client.updateAttempt(r.rollout_id, r.attempt.attempt_id, { status: 'succeeded' });
  return r.rollout_id;
}

test('the trainer refusing a batch skips it with the reason, weights unchanged; the next batch trains', async () => {
  const { initPolicy, trainStep } = createActivities();
  const cfg = validateRunConfig({
    learningRate: 1e-3, modelName: TEST_MODEL, rendererName: 'role_colon', baseUrl: trainer.url, storeAddress: store.server.url,
    logPath: path.join(scratch, 'run'), datasetBuilder: { batchSize: 1, groupSize: 2, trainDataset: ['t'] },
  });
  const settings = { ...cfg, runName: runNameOf(cfg), datasetBuilder: { ...cfg.datasetBuilder } } as unknown as RunSettings;
  const policy = await runActivity(initPolicy, settings, 0);
  const batch = (ids: string[]): CollectedBatch => ({ groups: [{ taskIndex: 0, rolloutIds: ids, statuses: ['succeeded', 'succeeded'] }], counts: { succeeded: 2, failed: 0, cancelled: 0, other: 0 } });

  // local/tiny-test's context is 96 tokens: a 500-token prompt makes a datum the trainer refuses.
  const refused = await runActivity(trainStep, settings, 0, batch([await rollout(500, 1), await rollout(500, 0)]), policy);
  assert.equal(refused.skipped, true);
  assert.match(refused.skipReason ?? '', /^the trainer refused the batch's data: .*context length/);
  assert.equal(refused.metrics['train/skipped_trainer_refused'], 1);
  assert.equal(refused.state.statePath, policy.statePath, 'weights unchanged');
  assert.equal(refused.state.step, 1, 'the run moves on');

  const next = await runActivity(trainStep, settings, 1, batch([await rollout(20, 1), await rollout(20, 0)]), refused.state);
  assert.equal(next.skipped, false);
  assert.notEqual(next.state.statePath, policy.statePath);
});
