// The trainer's memory stays bounded: frozen sampler weights beyond a limit are dropped least recently used
// first (path-backed ones reload from disk, ephemeral ones are gone), and a session that stops heartbeating
// loses its models, as on the hosted service.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceClient, TinkerApiError } from '../../tinker';
import type { TrainerServer } from '../../trainer/server/server';
import { TEST_MODEL, startTestTrainer, tempDir } from './helpers';

const tmp = tempDir('tinker-limits-');
let server: TrainerServer;

before(async () => {
  server = await startTestTrainer({ dataDir: tmp.dir, maxLoadedSamplers: 2, sessionTtlMs: 400 });
});
after(async () => {
  await server.close();
  tmp.remove();
});

const prompt = [...Buffer.from('Hi')];
const params = { maxTokens: 3, seed: 1 };

test('least recently used sampler weights are dropped; path-backed ones reload', async () => {
  const service = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-local', heartbeatMs: 50 });
  const tc = await service.createLoraTrainingClient(TEST_MODEL, { seed: 1 });
  const fromPath = await service.createSamplingClient({ modelPath: await tc.saveWeightsForSampler('s0') });
  const expected = await fromPath.sample(prompt, 1, params);
  const first = await tc.saveWeightsAndGetSamplingClient();
  await first.sample(prompt, 1, params);
  await tc.saveWeightsAndGetSamplingClient();
  await tc.saveWeightsAndGetSamplingClient();
  await assert.rejects(first.sample(prompt, 1, params), (err: unknown) => err instanceof TinkerApiError && err.status === 404);
  assert.deepEqual(await fromPath.sample(prompt, 1, params), expected, 'reloaded from disk');
  await service.close();
});

test('a session without heartbeats loses its models; one with heartbeats keeps them', async () => {
  const alive = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-local', heartbeatMs: 50 });
  const silent = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-local', heartbeatMs: 60_000 });
  const kept = await alive.createLoraTrainingClient(TEST_MODEL);
  const lost = await silent.createLoraTrainingClient(TEST_MODEL);
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal((await kept.getInfo()).modelId, kept.modelId);
  await assert.rejects(lost.getInfo(), (err: unknown) => err instanceof TinkerApiError && err.status === 404);
  await alive.close();
  await silent.close();
});
