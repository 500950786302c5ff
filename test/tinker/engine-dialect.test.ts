// The pieces of the client that bridge SDK 0.38 and SDK-0.25-era engines (SkyRL 0.4.0), each on the shapes
// those engines answer with (reference/skyrl-tinker.md); the real server is driven in test/engines/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SDK_038_PROFILE, profileFromOpenApi } from '../../tinker/engine-profile';
import { parseCheckpointPath } from '../../tinker/service-client';
import { withLossSum } from '../../tinker/training-client';
import { withLeadingNull } from '../../tinker/sampling-client';
import { engineFit } from '../../config/engine-fit';

/** The parts of SkyRL 0.4.0's OpenAPI document the profile reads: its title, some routes, LoadWeightsRequest. */
const skyrlDoc = {
  info: { title: 'Tinker API Mock', version: '0.0.1' },
  paths: {
    '/api/v1/load_weights': { post: {} },
    '/api/v1/training_runs/{unique_id}/checkpoints/{checkpoint_path}': { delete: {} },
    '/api/v1/session_heartbeat': { post: {} },
  },
  components: { schemas: { LoadWeightsRequest: { required: ['model_id', 'path'] } } },
};

test('an engine that publishes SkyRL 0.4.0 routes gets the SDK 0.25 profile', () => {
  const p = profileFromOpenApi(skyrlDoc);
  assert.deepEqual(p, { name: 'skyrl', version: '0.0.1', loadNeedsModel: true, checkpointTtl: false, checkpointDelete: true, sessionFinish: false });
});

test('a document with the 0.38 routes and a model-creating load_weights gets the 0.38 behaviour', () => {
  const p = profileFromOpenApi({
    info: { title: 'Some Tinker server' },
    paths: {
      '/api/v1/training_runs/{id}/checkpoints/{cp}/ttl': { put: {} },
      '/api/v1/training_runs/{id}/checkpoints/{cp}': { delete: {} },
      '/api/v1/sessions/{session_id}/finish': { post: {} },
    },
    components: { schemas: { LoadWeightsRequest: { required: ['path'] } } },
  });
  assert.deepEqual({ ...p, name: 'tinker', version: null }, SDK_038_PROFILE);
});

test("SkyRL's sampler path (no sampler_weights/) parses as the sampler checkpoint it lists", () => {
  assert.deepEqual(parseCheckpointPath('tinker://model_ab12cd34/000003'), { runId: 'model_ab12cd34', checkpointId: 'sampler_weights/000003' });
  assert.deepEqual(parseCheckpointPath('tinker://model_ab12cd34/weights/000003'), { runId: 'model_ab12cd34', checkpointId: 'weights/000003' });
  assert.throws(() => parseCheckpointPath('tinker://model_ab12cd34'), /not a tinker checkpoint path/);
  assert.throws(() => parseCheckpointPath('file:///x/y'), /not a tinker checkpoint path/);
});

test('loss:sum is the sum of elementwise_loss where the engine reports no metrics, and left alone where it does', () => {
  const outputs = [{ elementwise_loss: [0.5, 1.5], logprobs: [-1, -2] }, { elementwise_loss: [2], logprobs: [-3] }];
  assert.equal(withLossSum({ lossFnOutputType: '', lossFnOutputs: outputs, metrics: {} }).metrics['loss:sum'], 4);
  assert.equal(withLossSum({ lossFnOutputType: '', lossFnOutputs: outputs, metrics: { 'loss:sum': 9 } }).metrics['loss:sum'], 9);
  assert.equal(withLossSum({ lossFnOutputType: '', lossFnOutputs: [{ logprobs: [-1] }], metrics: {} }).metrics['loss:sum'], undefined);
});

test('prompt logprobs one short of the prompt get the leading null; whole ones are kept', () => {
  const seq = [{ tokens: [5], logprobs: [-1], stopReason: 'length' as const }];
  assert.deepEqual(withLeadingNull({ sequences: seq, promptLogprobs: [-1, -2] }, 3).promptLogprobs, [null, -1, -2]);
  assert.deepEqual(withLeadingNull({ sequences: seq, promptLogprobs: [null, -1, -2] }, 3).promptLogprobs, [null, -1, -2]);
  assert.equal(withLeadingNull({ sequences: seq, promptLogprobs: null }, 3).promptLogprobs, null);
});

const skyrl = profileFromOpenApi(skyrlDoc);
const URL_ = 'http://127.0.0.1:8110';

test('a run the engine cannot train is refused in one line naming the engine, its backend and the setting', () => {
  const cases: [Parameters<typeof engineFit>[0], RegExp][] = [
    [{ lossFn: 'ppo', loraRank: 8, engine: { name: 'skyrl', backend: 'fsdp' } }, /^lossFn: "ppo" is not trained by SkyRL's fsdp backend at http:\/\/127\.0\.0\.1:8110 \(it trains cross_entropy, importance_sampling\)$/],
    [{ async: {}, loraRank: 8, engine: { name: 'skyrl', backend: 'megatron' } }, /^lossFn: "ppo" is not trained by SkyRL's megatron backend/],
    [{ loraRank: 32, engine: { name: 'skyrl', backend: 'jax', maxLoraRank: 8 } }, /^loraRank: 32 is above the max_lora_rank 8 of SkyRL's jax backend at .* \(engine\.maxLoraRank\)/],
    [{ loraRank: 64 }, /^loraRank: 64 is above the max_lora_rank 32 of SkyRL's jax backend .*SkyRL's default/],
  ];
  for (const [cfg, message] of cases) {
    const { problems } = engineFit(cfg, skyrl, URL_);
    assert.equal(problems.length, 1, JSON.stringify(cfg));
    assert.match(problems[0]!, message);
    assert.ok(!problems[0]!.includes('\n'));
  }
  assert.deepEqual(engineFit({ lossFn: 'cispo', loraRank: 8, engine: { name: 'skyrl', backend: 'jax', maxLoraRank: 8 } }, skyrl, URL_).problems, []);
});

test('engine.name skyrl on a server that is not SkyRL is refused; TTLs on one without them are a note', () => {
  const wrong = engineFit({ loraRank: 8, engine: { name: 'skyrl' } }, SDK_038_PROFILE, URL_);
  assert.match(wrong.problems[0]!, /^engine\.name: "skyrl", but the server at .* is not SkyRL's Tinker API/);
  const ttl = engineFit({ loraRank: 8, checkpointTtlSeconds: 604800 }, skyrl, URL_);
  assert.deepEqual(ttl.problems, []);
  assert.match(ttl.notes[0]!, /^checkpointTtlSeconds: SkyRL's jax backend .* serves no checkpoint TTLs/);
  assert.deepEqual(engineFit({ loraRank: 64 }, SDK_038_PROFILE, URL_), { problems: [], notes: [] }, 'the 0.38 servers are checked as before');
});
