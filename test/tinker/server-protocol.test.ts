// The local trainer's protocol behaviour seen on the wire: bad input answered as {"error", "category":
// "user"} with the right HTTP status while the server keeps serving; per-model FIFO by seq_id (gaps
// buffered, duplicates deduped); long-poll try_again; reattaching a client by model_id.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestFailedError, ServiceClient } from '../../tinker';
import type { TrainerServer } from '../../trainer/server/server';
import { TEST_MODEL, startTestTrainer, tempDir, textDatum } from './helpers';
import { datumToJson, forwardBackwardOutputFromJson } from '../../tinker/wire/codec';

const tmp = tempDir('tinker-protocol-');
let server: TrainerServer;
let service: ServiceClient;

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function result(requestId: unknown): Promise<Record<string, unknown>> {
  for (;;) {
    const r = await post('/retrieve_future', { request_id: requestId });
    assert.equal(r.status, 200);
    if (r.body.type !== 'try_again') return r.body;
  }
}

const datum = datumToJson(textDatum('Hello, world!\n'));
const fwdBody = (modelId: string, seq: number, loss = 'cross_entropy', data: unknown[] = [datum]) => ({
  forward_backward_input: { data, loss_fn: loss },
  model_id: modelId,
  seq_id: seq,
});

async function newModel(seed = 1): Promise<string> {
  const session = await post('/create_session', { tags: [], user_metadata: {}, sdk_version: 'test' });
  const created = await post('/create_model', { session_id: session.body.session_id, model_seq_id: 0, base_model: TEST_MODEL, lora_config: { rank: 4, seed } });
  assert.equal(created.status, 200);
  const done = await result(created.body.request_id);
  return done.model_id as string;
}

before(async () => {
  server = await startTestTrainer({ dataDir: tmp.dir, longPollMs: 300, gapTimeoutMs: 1500 });
  service = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-local', futureTimeoutMs: 30_000 });
});
after(async () => {
  await service.close();
  await server.close();
  tmp.remove();
});

describe('bad input is a user error and the server keeps serving', () => {
  let modelId: string;
  before(async () => {
    modelId = await newModel();
  });

  const long = Array.from({ length: 600 }, () => 65);
  const cases: [string, () => [string, unknown], number, RegExp][] = [
    ['unknown base model', () => ['/create_model', { session_id: 's', model_seq_id: 0, base_model: 'nope/model' }], 404, /unknown base model/],
    ['unknown model_id', () => ['/get_info', { model_id: 'nobody:train:0' }], 404, /unknown model_id/],
    ['token out of vocabulary', () => ['/forward_backward', fwdBody(modelId, 1, 'cross_entropy', [{ ...datum, model_input: { chunks: [{ type: 'encoded_text', tokens: Array(13).fill(999) }] } }])], 400, /out of vocabulary/],
    ['loss input of the wrong length', () => ['/forward_backward', fwdBody(modelId, 2, 'cross_entropy', [{ ...datum, loss_fn_inputs: { ...datum.loss_fn_inputs, weights: { data: [1], dtype: 'float32' } } }])], 400, /weights has 1 values/],
    ['missing loss input', () => ['/forward_backward', fwdBody(modelId, 3, 'importance_sampling')], 400, /logprobs is required/],
    ['unsupported loss_fn', () => ['/forward_backward', fwdBody(modelId, 4, 'mystery')], 400, /not supported/],
    ['input over the context length', () => ['/forward_backward', fwdBody(modelId, 5, 'cross_entropy', [datumToJson({ modelInput: long, lossFnInputs: { target_tokens: long, weights: long.map(() => 1) } })])], 400, /context length/],
    ['bad optimizer params', () => ['/optim_step', { model_id: modelId, seq_id: 6, adam_params: { learning_rate: -1 } }], 400, /learning_rate/],
    ['bad checkpoint name', () => ['/save_weights', { model_id: modelId, seq_id: 7, path: '../escape' }], 400, /checkpoint name/],
    ['missing checkpoint', () => ['/load_weights', { model_id: modelId, seq_id: 8, path: `tinker://${modelId}/weights/none`, optimizer: false }], 404, /does not exist/],
    ['malformed tinker path', () => ['/load_weights', { model_id: modelId, seq_id: 9, path: 'file:///etc/passwd', optimizer: false }], 400, /tinker:\/\//],
    ['unknown sampling session', () => ['/asample', { sampling_session_id: 'nope', seq_id: 0, prompt: { chunks: [{ tokens: [1] }] }, sampling_params: {} }], 404, /unknown sampling_session_id/],
    ['negative temperature', () => ['/asample', { base_model: TEST_MODEL, prompt: { chunks: [{ tokens: [1] }] }, sampling_params: { temperature: -1 } }], 400, /temperature/],
    ['top_p of zero', () => ['/asample', { base_model: TEST_MODEL, prompt: { chunks: [{ tokens: [1] }] }, sampling_params: { top_p: 0 } }], 400, /top_p/],
    ['max_tokens of zero', () => ['/asample', { base_model: TEST_MODEL, prompt: { chunks: [{ tokens: [1] }] }, sampling_params: { max_tokens: 0 } }], 400, /max_tokens/],
    ['prompt over the context length', () => ['/asample', { base_model: TEST_MODEL, prompt: { chunks: [{ tokens: long }] }, sampling_params: {} }], 400, /context length/],
    ['empty prompt', () => ['/asample', { base_model: TEST_MODEL, prompt: { chunks: [] }, sampling_params: {} }], 400, /prompt is empty/],
    ['image chunk without bytes', () => ['/asample', { base_model: TEST_MODEL, prompt: { chunks: [{ type: 'image', data: '', format: 'png' }] }, sampling_params: {} }], 400, /image's bytes in base64/],
    ['image chunk without expected_tokens', () => ['/asample', { base_model: TEST_MODEL, prompt: { chunks: [{ type: 'image', data: 'AAAA', format: 'png' }] }, sampling_params: {} }], 400, /expected_tokens/],
    ['invalid JSON', () => ['/get_info', '{"model_id": '], 400, /not valid JSON/],
  ];
  for (const [name, make, status, message] of cases) {
    test(name, async () => {
      const [path, body] = make();
      const r = await post(path, body);
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.category, 'user');
      assert.match(String(r.body.error), message);
    });
  }

  test('an unknown request_id is a lost promise (410), not a user error', async () => {
    const r = await post('/retrieve_future', { request_id: 'req-nope' });
    assert.equal(r.status, 410);
    assert.equal(r.body.category, 'server');
    assert.match(String(r.body.error), /unknown or expired request_id/);
  });

  test('garbled protobuf forward_backward', async () => {
    const r = await post('/forward_backward', new Uint8Array([0x0a, 0xff, 0xff, 0xff]), { 'content-type': 'application/x-protobuf' });
    assert.equal(r.status, 400);
    assert.equal(r.body.category, 'user');
  });

  test('a queued request that fails answers its future with a user error; the model goes on', async () => {
    const tc = await service.createLoraTrainingClient(TEST_MODEL);
    await tc.saveState('twice');
    await assert.rejects(tc.saveState('twice'), (err: unknown) => err instanceof RequestFailedError && err.category === 'user' && /already exists/.test(err.message));
    assert.match(await tc.saveState('twice', { overwrite: true }), /weights\/twice$/);
  });

  test('rejected requests used up their seq_ids: the next one runs', async () => {
    const r = await post('/forward_backward', fwdBody(modelId, 10));
    assert.equal(r.status, 200);
    const out = await result(r.body.request_id);
    assert.equal(typeof (out.metrics as Record<string, number>)['loss:sum'], 'number');
  });
});

describe('seq_id ordering', () => {
  test('requests arriving out of order run in seq_id order', async () => {
    const adam = { learning_rate: 0.1 };
    // Reference: in order, through the client.
    const tc = await service.createLoraTrainingClient(TEST_MODEL, { seed: 7 });
    await tc.forwardBackward([textDatum('Hello, world!\n')], 'cross_entropy');
    await tc.optimStep({ learningRate: 0.1 });
    const expected = (await tc.forward([textDatum('Hello, world!\n')], 'cross_entropy')).metrics['loss:sum'];

    // Same seed, raw requests in reverse order: 3 (forward), 2 (optim_step), 1 (forward_backward).
    const modelId = await newModel(7);
    const third = await post('/forward', { forward_input: { data: [datum], loss_fn: 'cross_entropy' }, model_id: modelId, seq_id: 3 });
    const second = await post('/optim_step', { model_id: modelId, seq_id: 2, adam_params: adam });
    const early = await post('/retrieve_future', { request_id: third.body.request_id });
    assert.equal(early.body.type, 'try_again', 'seq 3 waits for seq 1 and 2');
    const first = await post('/forward_backward', fwdBody(modelId, 1));
    await result(first.body.request_id);
    await result(second.body.request_id);
    const out = forwardBackwardOutputFromJson((await result(third.body.request_id)) as never);
    assert.equal(out.metrics['loss:sum'], expected);
    // Same inputs, same order: bit-identical weights.
    const info = await post('/get_info', { model_id: modelId });
    assert.equal(info.body.weights_sha256, (await tc.getInfo()).weightsHash);
  });

  test('a repeated seq_id returns the first request_id', async () => {
    const modelId = await newModel();
    const a = await post('/forward_backward', fwdBody(modelId, 1));
    const b = await post('/forward_backward', fwdBody(modelId, 1));
    assert.equal(a.body.request_id, b.body.request_id);
    const stale = await post('/optim_step', { model_id: modelId, seq_id: 0, adam_params: {} });
    assert.equal(stale.status, 409);
  });

  test('a repeated sample seq_id returns the first request_id; reused for another prompt it is a conflict', async () => {
    const body = { base_model: TEST_MODEL, prompt: { chunks: [{ tokens: [72, 105] }] }, sampling_params: { max_tokens: 2, seed: 1 } };
    const sampler = await (await service.createLoraTrainingClient(TEST_MODEL)).saveWeightsAndGetSamplingClient();
    const id = sampler.samplingSessionId;
    const a = await post('/asample', { ...body, sampling_session_id: id, seq_id: 5 });
    const b = await post('/asample', { ...body, sampling_session_id: id, seq_id: 5 });
    assert.equal(a.body.request_id, b.body.request_id);
    assert.deepEqual(a.body.sample_sequence_ids, [`${a.body.request_id}:0`]);
    const c = await post('/asample', { ...body, prompt: { chunks: [{ tokens: [1] }] }, sampling_session_id: id, seq_id: 5 });
    assert.equal(c.status, 409);
    assert.equal(c.body.category, 'user');
  });

  test('a gap that is never filled fails the waiting request', async () => {
    const modelId = await newModel();
    const r = await post('/forward_backward', fwdBody(modelId, 5));
    const out = await result(r.body.request_id);
    assert.equal(out.category, 'user');
    assert.match(String(out.error), /never arrived/);
  });

  test('a client reattached by model_id continues the sequence', async () => {
    const tc = await service.createLoraTrainingClient(TEST_MODEL, { seed: 2 });
    await tc.forwardBackward([textDatum('abc')], 'cross_entropy');
    const again = await new ServiceClient({ baseUrl: server.url, apiKey: 'tml-local' }).attachTrainingClient(tc.modelId);
    assert.equal(again.nextSeqId, tc.nextSeqId);
    const metrics = await again.optimStep({ learningRate: 0.01 });
    assert.equal(typeof metrics, 'object');
  });
});
