// SDK 0.38's retry rules, shown by fault injection with both clients: the official Python SDK and ours each run
// the same steps against a real local trainer through a proxy that answers some requests itself — a 409 on
// forward_backward, a 402 then a 503 then a 429 with Retry-After on optim_step, a bodiless 400 on asample, a 408
// on save_weights_for_sampler, a 503 with `x-should-retry: false` and a 400 with `x-should-retry: true` on
// create_sampling_session — then a request the trainer itself rejects, and close(). Both must come through the
// same way: every retry carries the same seq_id, nothing else fails, and the call after the rejected one runs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ServiceClient } from '../../tinker';
import { forwardBackwardRequestFromProto } from '../../tinker/wire/codec';
import type { TrainerServer } from '../../trainer/server/server';
import { ensureVenv } from '../helpers/python';
import { TEST_MODEL, startTestTrainer, tempDir, textDatum } from '../tinker/helpers';
import { startRecordingProxy, type RecordingProxy } from '../tinker/recording-proxy';

const run = promisify(execFile);
const tmp = tempDir('tinker-retry-');
let trainer: TrainerServer;

before(async () => {
  trainer = await startTestTrainer({ dataDir: tmp.dir });
});
after(async () => {
  await trainer?.close();
  tmp.remove();
});

function injectFaults(proxy: RecordingProxy): void {
  proxy.fault({ method: 'POST', path: '/forward_backward', times: 1, status: 409, body: JSON.stringify({ detail: 'lock timeout' }) });
  proxy.fault({ method: 'POST', path: '/optim_step', times: 1, status: 402, body: JSON.stringify({ detail: 'billing: card declined' }) });
  proxy.fault({ method: 'POST', path: '/optim_step', times: 1, status: 503 });
  proxy.fault({ method: 'POST', path: '/optim_step', times: 1, status: 429, headers: { 'retry-after': '1' } });
  proxy.fault({ method: 'POST', path: '/asample', times: 1, status: 400, body: '' });
  proxy.fault({ method: 'POST', path: '/save_weights_for_sampler', times: 1, status: 408 });
  proxy.fault({ method: 'POST', path: '/create_sampling_session', times: 1, status: 503, headers: { 'x-should-retry': 'false' } });
  proxy.fault({ method: 'POST', path: '/create_sampling_session', times: 1, status: 400, headers: { 'x-should-retry': 'true' } });
}

type Steps = Record<string, string>;

async function step(out: Steps, name: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
    out[name] = 'ok';
  } catch (err) {
    out[name] = `${(err as Error).name}: ${(err as Error).message.slice(0, 200)}`;
  }
}

/** The steps of tinker-retry-scenario.py, with our client. */
async function ourClient(url: string, log: string[]): Promise<Steps> {
  const out: Steps = {};
  const sc = new ServiceClient({ baseUrl: url, apiKey: 'tml-retry', billingPauseMs: 200, log: (l) => log.push(l) });
  const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 1 });
  const batch = [textDatum('Hello, world!\n')];
  await step(out, 'train', async () => {
    const fb = tc.forwardBackward(batch, 'cross_entropy');
    const opt = tc.optimStep({ learningRate: 0.01 });
    await Promise.all([fb, opt]);
  });
  await step(out, 'sample', async () => {
    const s = await tc.saveWeightsAndGetSamplingClient();
    await s.sample([...Buffer.from('Hi')], 1, { maxTokens: 2, seed: 3 });
  });
  await step(out, 'sampler_refused', () => sc.createSamplingClient({ baseModel: TEST_MODEL }));
  await step(out, 'sampler_retried', () => sc.createSamplingClient({ baseModel: TEST_MODEL }));
  await step(out, 'rejected', () => tc.forward([{ modelInput: [1, 2], lossFnInputs: { target_tokens: [99999, 1], weights: [1, 1] } }], 'cross_entropy'));
  await step(out, 'after_rejected', () => tc.forward(batch, 'cross_entropy', undefined, { timeoutMs: 30_000 }));
  await step(out, 'close', () => sc.close('success'));
  return out;
}

async function pythonSdk(url: string): Promise<{ steps: Steps; stderr: string }> {
  const venv = await ensureVenv('tinker-sdk', ['tinker==0.38.0']);
  const { stdout, stderr } = await run(venv.python, ['-W', 'ignore', path.join(__dirname, 'tinker-retry-scenario.py'), url, TEST_MODEL], {
    env: { ...process.env, TINKER_API_KEY: 'tml-retry', TINKER_TELEMETRY: '0' },
    timeout: 240_000,
    maxBuffer: 16 << 20,
  });
  const lines = stdout.trim().split('\n');
  return { steps: JSON.parse(lines[lines.length - 1]) as Steps, stderr };
}

const jsonSeq = (r: { body: Buffer }) => (JSON.parse(r.body.toString('utf8')) as { seq_id: number }).seq_id;

function checkRetries(proxy: RecordingProxy, steps: Steps, who: string): void {
  const failed = (name: string) => assert.notEqual(steps[name], 'ok', `${who}: ${name} should fail`);
  for (const name of ['train', 'sample', 'sampler_retried', 'after_rejected', 'close']) assert.equal(steps[name], 'ok', `${who}: ${name}: ${steps[name]}`);
  failed('sampler_refused');
  failed('rejected');

  // 409 on forward_backward: retried by the transport layer, same body, same seq_id, same idempotency key.
  const fb = proxy.calls('/forward_backward', 'POST');
  assert.deepEqual([fb[0].status, fb[1].status], [409, 200], `${who}: forward_backward statuses`);
  assert.equal(forwardBackwardRequestFromProto(fb[0].body).seqId, forwardBackwardRequestFromProto(fb[1].body).seqId);
  assert.equal(fb[0].headers['x-idempotency-key'], fb[1].headers['x-idempotency-key'], `${who}: one idempotency key across transport retries`);

  // 402 waited out, then 503 and 429 (Retry-After) retried: four submits of one seq_id.
  const opt = proxy.calls('/optim_step', 'POST');
  assert.deepEqual(opt.map((r) => r.status), [402, 503, 429, 200], `${who}: optim_step statuses`);
  assert.equal(new Set(opt.map(jsonSeq)).size, 1, `${who}: optim_step keeps its seq_id`);

  const samples = proxy.calls('/asample', 'POST');
  assert.deepEqual(samples.map((r) => r.status), [400, 200], `${who}: a bodiless 400 on asample is retried`);
  assert.equal(jsonSeq(samples[0]), jsonSeq(samples[1]));

  const saves = proxy.calls('/save_weights_for_sampler', 'POST');
  assert.deepEqual(saves.map((r) => r.status), [408, 200], `${who}: 408 on save_weights_for_sampler is retried`);
  assert.equal(jsonSeq(saves[0]), jsonSeq(saves[1]));

  // x-should-retry: false stops a retryable 503; x-should-retry: true retries a 400.
  assert.deepEqual(proxy.calls('/create_sampling_session').map((r) => r.status), [503, 400, 200], `${who}: x-should-retry obeyed`);

  // The rejected forward used its seq_id; the next forward got the next one and ran (no gap to wait on).
  const forwards = fb.slice(2).map((r) => forwardBackwardRequestFromProto(r.body));
  assert.equal(forwards.length, 2);
  assert.equal(forwards[1].seqId, forwards[0].seqId + 1);
  assert.equal(proxy.calls(/^\/sessions\/[^/]+\/finish$/, 'POST').length, 1, `${who}: close() finishes the session`);
}

test('the Python SDK 0.38 retries the injected faults as its rules say', { timeout: 300_000 }, async () => {
  const proxy = await startRecordingProxy(trainer.url);
  try {
    injectFaults(proxy);
    const { steps, stderr } = await pythonSdk(proxy.url);
    checkRetries(proxy, steps, 'SDK');
    assert.match(stderr, /paused due to billing status/);
  } finally {
    await proxy.close();
  }
});

test('our client retries the same faults the same way', { timeout: 120_000 }, async () => {
  const proxy = await startRecordingProxy(trainer.url);
  const log: string[] = [];
  try {
    injectFaults(proxy);
    const steps = await ourClient(proxy.url, log);
    checkRetries(proxy, steps, 'ours');
    assert.ok(log.some((l) => /paused due to billing status/.test(l)), log.join('\n'));
    // Ours keeps one idempotency key for every retry of a call (the SDK draws a new one per holder retry).
    assert.equal(new Set(proxy.calls('/optim_step', 'POST').map((r) => r.headers['x-idempotency-key'])).size, 1);
  } finally {
    await proxy.close();
  }
});
