// Wire parity with the official SDK: the same scenario (tinker-wire-scenario.py) is driven by the Python SDK 0.38
// and by our client, each through a recording proxy in front of one local trainer that runs hosted Tinker's
// handshake in full: JWT mode, zstd forward_backward bodies, chunks of at most 2 datums sent in parallel. The
// endpoints, methods, header names and JSON field names of the two recordings are compared endpoint by endpoint,
// the protobuf forward_backward chunks are decoded and compared, and both clients must get the same numbers.
// Every difference that remains is listed below with the reason it is harmless; anything else fails the test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { SDK_038_PROFILE } from '../../tinker/engine-profile';
import { ServiceClient } from '../../tinker';
import type { TrainerServer } from '../../trainer/server/server';
import { ensureVenv } from '../helpers/python';
import { TEST_MODEL, startTestTrainer, tempDir, textDatum } from '../tinker/helpers';
import { startRecordingProxy, type RecordingProxy } from '../tinker/recording-proxy';
import { decode, keyPaths, minus, unionBy, type Decoded } from './wire-shapes';

const run = promisify(execFile);
const KEY = 'tml-wire-parity';
const FLAGS = { proto_compress_fwdbwd: true, fwdbwd_max_chunk_len: 2, parallel_fwdbwd_chunks: true };

/** Endpoints only one side calls, and why that is harmless. */
const ONLY_SDK: Record<string, string> = {
  'GET /samplers/{sampler}': 'create_sampling_client(model_path) asks for the base model to load a tokenizer; ours tokenizes elsewhere and asks only in getInfo()',
};
const ONLY_OURS: Record<string, string> = {};

/** Header names only one side sends (on any endpoint), and why that is harmless. */
const HEADERS_ONLY_SDK: Record<string, string> = {
  'x-stainless-package-version': 'describes the Python runtime of the Stainless client',
  'x-stainless-os': 'as above',
  'x-stainless-arch': 'as above',
  'x-stainless-runtime': 'as above',
  'x-stainless-runtime-version': 'as above',
  'x-stainless-async': 'as above',
  'x-stainless-read-timeout': "the client's read timeout, informative",
  'x-stainless-raw-response': 'marks a Python-side raw response wrapper on polls; nothing for the service',
};
const HEADERS_ONLY_OURS: Record<string, string> = {
  'accept-language': "added by Node's fetch (undici) to every request; the service ignores it",
  'sec-fetch-mode': 'as above',
};

let trainer: TrainerServer;
const tmp = tempDir('tinker-parity-');

before(async () => {
  trainer = await startTestTrainer({ dataDir: tmp.dir, token: KEY, jwtLifetimeSeconds: 3600, clientFlags: FLAGS });
});
after(async () => {
  await trainer?.close();
  tmp.remove();
});

interface Results {
  loss: number;
  tokens: number[][];
  logprobs: (number | null)[];
  tokens2: number[];
  loss_from_state: number;
  checkpoints: string[];
}

async function pythonSdk(url: string): Promise<Results> {
  const venv = await ensureVenv('tinker-sdk', ['tinker==0.38.0']);
  const { stdout } = await run(venv.python, ['-W', 'ignore', path.join(__dirname, 'tinker-wire-scenario.py'), url, TEST_MODEL], {
    env: { ...process.env, TINKER_API_KEY: KEY, TINKER_TELEMETRY: '0' },
    timeout: 180_000,
    maxBuffer: 16 << 20,
  });
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Results;
}

/** tinker-wire-scenario.py's steps with our client. */
async function ourClient(url: string): Promise<Results> {
  const batch = [textDatum('Hello, world!\n'), textDatum('Hello there, tinker.\n'), textDatum('One more line.\n')];
  const prompt = [...Buffer.from('Hello')];
  // As against hosted Tinker's URL, which the client knows speaks SDK 0.38 and never asks (tinker/engine-profile.ts);
  // the stand-in here has another URL, so it is told.
  const sc = new ServiceClient({ baseUrl: url, apiKey: KEY, profile: SDK_038_PROFILE });
  const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 8, seed: 3 });
  const fb = tc.forwardBackward(batch, 'cross_entropy');
  const opt = tc.optimStep({ learningRate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
  const loss = (await fb).metrics['loss:sum'];
  await opt;
  const state = await tc.saveState('w1', { ttlSeconds: 7200 });
  const samplerPath = await tc.saveWeightsForSampler('s1', { ttlSeconds: 7200 });
  const s1 = await sc.createSamplingClient({ modelPath: samplerPath });
  const r = await s1.sample(prompt, 2, { maxTokens: 4, seed: 5 });
  const logprobs = await s1.computeLogprobs([...prompt, ...r.sequences[0].tokens]);
  const s2 = await tc.saveWeightsAndGetSamplingClient();
  const tokens2 = (await s2.sample(prompt, 1, { maxTokens: 3, seed: 6 })).sequences[0].tokens;
  const tc2 = await sc.createTrainingClientFromState(state, { withOptimizer: true });
  const lossFromState = (await tc2.forward(batch, 'cross_entropy')).metrics['loss:sum'];
  await sc.setCheckpointTtl(state, null);
  const checkpoints = (await sc.listCheckpoints(tc.modelId)).map((c) => c.tinkerPath).sort();
  await sc.close('success');
  return { loss, tokens: r.sequences.map((s) => s.tokens), logprobs, tokens2, loss_from_state: lossFromState, checkpoints };
}

async function recorded(drive: (url: string) => Promise<Results>): Promise<{ results: Results; records: Decoded[]; proxy: RecordingProxy }> {
  const proxy = await startRecordingProxy(trainer.url);
  try {
    const results = await drive(proxy.url);
    return { results, records: await Promise.all(proxy.records.map(decode)), proxy };
  } finally {
    await proxy.close();
  }
}

const TRAINING = /^POST \/(forward_backward|optim_step|save_weights|save_weights_for_sampler|load_weights)$/;
const seqOf = (d: Decoded) => d.proto?.seqId ?? (d.json as { seq_id?: number } | undefined)?.seq_id;

test('our client and the official SDK 0.38 speak the same wire (JWT mode, zstd, parallel chunks)', { timeout: 300_000 }, async () => {
  const sdk = await recorded(pythonSdk);
  const ours = await recorded(ourClient);

  // The same numbers: the two clients asked the trainer the same things.
  const norm = (r: Results) => ({ ...r, checkpoints: r.checkpoints.map((c) => c.replace(/^tinker:\/\/[^/]+/, '')) });
  assert.deepEqual(norm(ours.results), norm(sdk.results));

  // Endpoints and methods.
  const sdkEndpoints = new Set(sdk.records.map((d) => d.endpoint));
  const ourEndpoints = new Set(ours.records.map((d) => d.endpoint));
  assert.deepEqual(minus(sdkEndpoints, ourEndpoints), Object.keys(ONLY_SDK).sort(), 'endpoints only the SDK calls');
  assert.deepEqual(minus(ourEndpoints, sdkEndpoints), Object.keys(ONLY_OURS).sort(), 'endpoints only we call');

  // Header names and JSON field names, endpoint by endpoint.
  const sdkHeaders = unionBy(sdk.records, (d) => d.headers);
  const ourHeaders = unionBy(ours.records, (d) => d.headers);
  const sdkFields = unionBy(sdk.records, (d) => keyPaths(d.json));
  const ourFields = unionBy(ours.records, (d) => keyPaths(d.json));
  const problems: string[] = [];
  for (const ep of [...ourEndpoints].filter((e) => sdkEndpoints.has(e)).sort()) {
    const onlySdkH = minus(sdkHeaders.get(ep)!, ourHeaders.get(ep)!).filter((h) => !(h in HEADERS_ONLY_SDK));
    const onlyOursH = minus(ourHeaders.get(ep)!, sdkHeaders.get(ep)!).filter((h) => !(h in HEADERS_ONLY_OURS));
    const onlySdkF = minus(sdkFields.get(ep)!, ourFields.get(ep)!);
    const onlyOursF = minus(ourFields.get(ep)!, sdkFields.get(ep)!);
    for (const [what, list] of [['headers only the SDK sends', onlySdkH], ['headers only we send', onlyOursH], ['fields only the SDK sends', onlySdkF], ['fields only we send', onlyOursF]] as const) {
      if (list.length) problems.push(`${ep}: ${what}: ${list.join(', ')}`);
    }
  }
  assert.deepEqual(problems, [], problems.join('\n'));
  // The allowed lists stay honest: each entry is a difference that really occurs.
  const allSdk = new Set(sdk.records.flatMap((d) => d.headers));
  const allOurs = new Set(ours.records.flatMap((d) => d.headers));
  assert.deepEqual(Object.keys(HEADERS_ONLY_SDK).filter((h) => !allSdk.has(h) || allOurs.has(h)), [], 'stale entries in HEADERS_ONLY_SDK');
  assert.deepEqual(Object.keys(HEADERS_ONLY_OURS).filter((h) => !allOurs.has(h) || allSdk.has(h)), [], 'stale entries in HEADERS_ONLY_OURS');

  // The training requests: the same seq_ids on the same endpoints, and the same decoded forward_backward chunks.
  const training = (rs: Decoded[]) => rs.filter((d) => TRAINING.test(d.endpoint) && d.record.status === 200).map((d) => `${d.endpoint}#${seqOf(d)}`).sort();
  assert.deepEqual(training(ours.records), training(sdk.records));
  const chunks = (rs: Decoded[]) =>
    rs
      .filter((d) => d.proto)
      .map((d) => ({ ...d.proto!, modelId: d.proto!.modelId.replace(/^[^:]+/, '{session}') }))
      .sort((a, b) => a.modelId.localeCompare(b.modelId) || a.seqId - b.seqId);
  const ourChunks = chunks(ours.records);
  assert.ok(ourChunks.length >= 4, 'forward_backward went out in chunks of at most 2 datums');
  assert.ok(ourChunks.every((c) => c.data.length <= 2));
  assert.deepEqual(ourChunks, chunks(sdk.records));
  for (const side of [sdk, ours]) {
    const fbs = side.records.filter((d) => d.endpoint === 'POST /forward_backward');
    assert.ok(fbs.every((d) => d.record.headers['content-encoding'] === 'zstd'), 'forward_backward bodies are zstd-compressed');
  }

  // JWT mode: the raw key only where it is traded (client/config, auth/token), a JWT everywhere else.
  for (const side of [sdk, ours]) {
    const raw = side.records.filter((d) => d.record.headers['x-api-key'] === KEY).map((d) => d.endpoint);
    assert.deepEqual([...new Set(raw)].sort(), ['POST /auth/token', 'POST /client/config']);
    const others = side.records.filter((d) => !['POST /auth/token', 'POST /client/config'].includes(d.endpoint));
    assert.ok(others.every((d) => String(d.record.headers['x-api-key']).startsWith('eyJ')));
    assert.ok(side.records.every((d) => d.record.status < 400), `no request was refused: ${side.records.filter((d) => d.record.status >= 400).map((d) => `${d.endpoint} ${d.record.status}`)}`);
  }
});
