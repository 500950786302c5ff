// Property-based fuzzing of the local trainer's HTTP inputs (bigram engine, so it is fast): random JSON and
// field-shaped bodies on every route, random bytes (protobuf and JSON content types), hostile paths and raw
// request lines. Never a 5xx from our code for bad input and never a crash: the trainer keeps serving and a
// model created before still answers. Bounded: a fixed number of runs per property.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { startTrainerServer, type TrainerServer } from '../../trainer/server/server';
import { createBigramEngine } from '../../trainer/server/bigram-engine';
import { ServiceClient } from '../../tinker';
import { checkAnswer, fuzz, hostileJsonText, hostilePath, invalidUtf8, jsonOf, methods, report, send, sendRaw } from './http-fuzz';

const dir = mkdtempSync(path.join(os.tmpdir(), 'agl-trainer-fuzz-'));
let server: TrainerServer;
let base = '';
let modelId = '';
let tinker: ServiceClient;

const POSTS = [
  '/client/config', '/create_session', '/session_heartbeat', '/create_model', '/get_info', '/unload_model', '/optim_step', '/save_weights',
  '/save_weights_for_sampler', '/load_weights', '/create_sampling_session', '/asample', '/weights_info', '/forward', '/forward_backward', '/retrieve_future',
].map((p) => `/api/v1${p}`);
const FIELDS = [
  'session_id', 'model_id', 'base_model', 'lora_config', 'rank', 'seed', 'seq_id', 'request_id', 'path', 'name', 'adam_params', 'learning_rate',
  'forward_backward_input', 'data', 'loss_fn', 'loss_fn_config', 'model_input', 'chunks', 'tokens', 'loss_fn_inputs', 'target_tokens', 'weights',
  'advantages', 'logprobs', 'prompt', 'num_samples', 'sampling_params', 'max_tokens', 'temperature', 'top_k', 'top_p', 'stop', 'sampling_session_id',
  'model_path', 'type', 'tags', 'user_metadata', 'sdk_version', 'optimizer',
];
const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(-1, 0, 1, 1e308, 2 ** 53 + 1, 0.5, '', 'tinker://x/weights/1', null, [], {}, [[1, 2]], { data: [1], dtype: 'int64', shape: [1] }));
const fieldBody = fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 6 }).map((o) => JSON.stringify(o));

/** Bad input is a 4xx; our code answers 5xx only for its own faults, which is what the fuzzing looks for. */
function checked(a: Awaited<ReturnType<typeof send>>, where: string): void {
  checkAnswer(a, where);
}

before(async () => {
  server = await startTrainerServer({ engine: createBigramEngine(), dataDir: dir, port: 0, log: () => {} });
  base = `http://127.0.0.1:${server.port}`;
  tinker = new ServiceClient({ baseUrl: base });
  modelId = (await tinker.createLoraTrainingClient('local/bigram', { rank: 4, seed: 1 })).modelId;
});

after(async () => {
  report('trainer');
  await tinker?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('trainer: hostile input never gets a 5xx or a crash; it keeps serving', { timeout: 120_000 }, async () => {
  await fuzz('random JSON on every POST route', fc.tuple(fc.constantFrom(...POSTS), hostileJsonText), 300, async ([route, body]) => {
    checked(await send(base, 'POST', route, { 'content-type': 'application/json' }, body), `POST ${route} ${body.slice(0, 200)}`);
  });
  await fuzz('protocol-shaped bodies with random values', fc.tuple(fc.constantFrom(...POSTS), fieldBody), 400, async ([route, body]) => {
    checked(await send(base, 'POST', route, { 'content-type': 'application/json' }, body), `POST ${route} ${body.slice(0, 300)}`);
  });
  await fuzz(
    'random bytes (protobuf and JSON), invalid UTF-8',
    fc.tuple(fc.constantFrom(...POSTS), fc.oneof(invalidUtf8, fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b))), fc.constantFrom('application/json', 'application/x-protobuf', 'text/plain')),
    300,
    async ([route, body, type]) => {
      checked(await send(base, 'POST', route, { 'content-type': type }, body), `POST ${route} (${type}) ${body.toString('hex').slice(0, 120)}`);
    },
  );
  await fuzz('hostile paths and methods', fc.tuple(methods, hostilePath(['/api/v1', '/api/v1/training_runs', '/api/v1/samplers', '/api/v1/training_runs/x/checkpoints', '/', '//'])), 300, async ([method, p]) => {
    const a = await send(base, method, p, { 'content-type': 'application/json' }, method === 'POST' ? '{}' : undefined);
    if (method === 'HEAD') assert.ok(a.status < 500, `HEAD ${p}: ${a.status}`);
    else checked(a, `${method} ${p.slice(0, 200)}`);
  });
  await fuzz('raw request lines', fc.uint8Array({ minLength: 1, maxLength: 60 }), 150, async (target) => {
    const bytes = Buffer.concat([Buffer.from('GET /'), Buffer.from(target).filter((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d), Buffer.from(' HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')]);
    const a = await sendRaw(base, bytes);
    if (a.status === 0 || a.status >= 500) throw new Error(`raw ${bytes.toString('latin1').slice(0, 120)} → ${a.status} ${a.text.slice(0, 200)}`);
  });

  // Still serving, and the model made before answers.
  const health = await send(base, 'GET', '/api/v1/healthz', {});
  assert.equal(health.status, 200);
  const info = jsonOf(await send(base, 'POST', '/api/v1/get_info', { 'content-type': 'application/json' }, JSON.stringify({ model_id: modelId }))) as Record<string, unknown>;
  assert.ok(JSON.stringify(info).includes('local/bigram'), JSON.stringify(info).slice(0, 300));
});
