// The TypeScript client drives the local trainer through the scenario, over both wire formats:
// create a LoRA model, forward_backward (cross_entropy, importance_sampling), optim_step, sample from a
// snapshot, save_state / load_state; the loss on a fixed batch goes down.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceClient, TinkerApiError, type TrainingClient } from '../../tinker';
import type { TrainerServer } from '../../trainer/server/server';
import { TEST_MODEL, startTestTrainer, sum, tempDir, textDatum } from './helpers';

const batch = [textDatum('Hello, world!\n'), textDatum('Hello there, tinker.\n')];
const ADAM = { learningRate: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-8 };

for (const wire of ['proto', 'json'] as const) {
  describe(`client scenario over ${wire}`, () => {
    const tmp = tempDir('tinker-scenario-');
    let server: TrainerServer;
    let service: ServiceClient;
    let tc: TrainingClient;

    before(async () => {
      server = await startTestTrainer({ dataDir: tmp.dir });
      service = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-local', wire, futureTimeoutMs: 60_000 });
    });
    after(async () => {
      await service.close();
      await server.close();
      tmp.remove();
    });

    test('capabilities list the base models', async () => {
      const caps = await service.getServerCapabilities();
      assert.ok(caps.some((m) => m.modelName === TEST_MODEL && (m.maxContextLength ?? 0) > 0));
    });

    test('create a LoRA training client and read its info', async () => {
      tc = await service.createLoraTrainingClient(TEST_MODEL, { rank: 8, seed: 3 });
      assert.match(tc.modelId, /:train:0$/);
      const info = await tc.getInfo();
      assert.equal(info.baseModel, TEST_MODEL);
      assert.equal(info.tokenizerId, 'local/bytes');
      assert.equal(info.loraRank, 8);
    });

    test('cross_entropy: loss on a fixed batch goes down', async () => {
      const before = await tc.forward(batch, 'cross_entropy');
      assert.equal(before.lossFnOutputs.length, batch.length);
      assert.equal(before.lossFnOutputs[0].logprobs.length, batch[0].modelInput.length);
      const expected = -sum(before.lossFnOutputs.flatMap((o) => o.logprobs));
      assert.ok(Math.abs(before.metrics['loss:sum'] - expected) < 1e-3 * Math.abs(expected));
      for (let i = 0; i < 5; i++) {
        // Submitted back to back: seq_ids keep them in order.
        const fb = tc.forwardBackward(batch, 'cross_entropy');
        const step = tc.optimStep(ADAM);
        await Promise.all([fb, step]);
      }
      const afterLoss = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
      assert.ok(afterLoss < before.metrics['loss:sum'] * 0.95, `loss ${before.metrics['loss:sum']} -> ${afterLoss}`);
    });

    test('sample from a snapshot; logprobs agree with forward and compute_logprobs', async () => {
      const sampler = await tc.saveWeightsAndGetSamplingClient();
      const prompt = [...Buffer.from('Hello')];
      const a = await sampler.sample(prompt, 3, { maxTokens: 6, temperature: 1, seed: 11 });
      const b = await sampler.sample(prompt, 3, { maxTokens: 6, temperature: 1, seed: 11 });
      assert.equal(a.sequences.length, 3);
      assert.deepEqual(a, b, 'same seed, same samples');
      const seq = a.sequences[0];
      assert.ok(seq.tokens.length >= 1 && seq.tokens.length <= 6);
      assert.equal(seq.logprobs?.length, seq.tokens.length);
      assert.equal(seq.stopReason, seq.tokens.length === 6 ? 'length' : 'stop');

      const full = [...prompt, ...seq.tokens];
      const lps = await sampler.computeLogprobs(full);
      assert.equal(lps[0], null);
      for (let i = 0; i < seq.tokens.length; i++) assert.ok(Math.abs(lps[prompt.length + i]! - seq.logprobs![i]) < 1e-4);

      // importance_sampling with the sampler's own logprobs: ratio 1, so loss = -sum(advantages).
      const advantages = [...prompt.slice(1).map(() => 0), ...seq.tokens.map(() => 0.5)];
      const datum = {
        modelInput: full.slice(0, -1),
        lossFnInputs: {
          target_tokens: full.slice(1),
          logprobs: [...prompt.slice(1).map(() => 0), ...seq.logprobs!],
          advantages,
        },
      };
      const fb = await tc.forwardBackward([datum], 'importance_sampling');
      const learner = fb.lossFnOutputs[0].logprobs.slice(prompt.length - 1);
      for (let i = 0; i < learner.length; i++) assert.ok(Math.abs(learner[i] - seq.logprobs![i]) < 1e-4);
      assert.ok(Math.abs(fb.metrics['loss:sum'] + sum(advantages)) < 1e-3);
      await tc.optimStep(ADAM);
    });

    test('save_state, train on, load_state restores the loss', async () => {
      const path = await tc.saveState('ckpt-1');
      assert.equal(path, `tinker://${tc.modelId}/weights/ckpt-1`);
      const atSave = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
      await tc.forwardBackward(batch, 'cross_entropy');
      await tc.optimStep(ADAM);
      const moved = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
      assert.notEqual(moved, atSave);
      await tc.loadState(path);
      assert.equal((await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'], atSave);
      await tc.loadStateWithOptimizer(path);
      assert.equal((await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'], atSave);

      // A second model rebuilt from the checkpoint has the same weights, byte for byte.
      const other = await service.createTrainingClientFromState(path, { withOptimizer: true });
      assert.equal((await other.forward(batch, 'cross_entropy')).metrics['loss:sum'], atSave);
      const saved = await service.weightsInfo(path);
      assert.equal(saved.baseModel, TEST_MODEL);
      assert.match(saved.weightsHash ?? '', /^[0-9a-f]{64}$/);
      assert.equal((await tc.getInfo()).weightsHash, saved.weightsHash);
      assert.equal((await other.getInfo()).weightsHash, saved.weightsHash);
      await other.unload();
      await assert.rejects(other.forward(batch, 'cross_entropy'), /unloaded/);
      await assert.rejects(service.attachTrainingClient(other.modelId), (err: unknown) => err instanceof TinkerApiError && err.status === 404);
    });

    test('named sampler weights open as a sampling session', async () => {
      const path = await tc.saveWeightsForSampler('sampler-1');
      assert.equal(path, `tinker://${tc.modelId}/sampler_weights/sampler-1`);
      const sampler = await service.createSamplingClient({ modelPath: path });
      const res = await sampler.sample([...Buffer.from('Hi')], 1, { maxTokens: 4, seed: 1 });
      assert.equal(res.sequences.length, 1);
      const info = await sampler.getInfo();
      assert.equal(info.baseModel, TEST_MODEL);
      assert.equal(info.modelPath, path);

      const listed = await service.listCheckpoints(tc.modelId);
      assert.deepEqual(listed.map((c) => [c.tinkerPath, c.type]), [
        [`tinker://${tc.modelId}/weights/ckpt-1`, 'training'],
        [path, 'sampler'],
      ]);
      await service.deleteCheckpoint(path);
      assert.deepEqual((await service.listCheckpoints(tc.modelId)).map((c) => c.type), ['training']);
      await assert.rejects(service.createSamplingClient({ modelPath: path }), (err: unknown) => err instanceof TinkerApiError && err.status === 404);
    });
  });
}
