// `npm run proxy` (proxy/main.ts as a child process) against the real local trainer (Tinker API, bigram
// engine) and the real store: initial policy from --model, rollout-scoped calls with spans, a switch to a
// saved sampler snapshot, and sampler retries.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess } from '../../common/processes';
import type { ManagedProcess } from '../../common/processes';
import { ServiceClient } from '../../tinker';
import { createBigramEngine } from '../../trainer/server/bigram-engine';
import { startTrainerServer } from '../../trainer/server/server';
import type { TrainerServer } from '../../trainer/server/server';
import { startStoreServer } from '../../store/server';
import type { StoreServer } from '../../store/server';
import { StoreClient } from '../../store/client';
import { post } from './helpers';

const ROOT = path.resolve(__dirname, '..', '..');
let dir: string;
let trainer: TrainerServer;
let store: StoreServer;
let proxy: ManagedProcess;
let url: string;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'agl-proxy-e2e-'));
  trainer = await startTrainerServer({ engine: createBigramEngine(), dataDir: path.join(dir, 'trainer'), log: () => {} });
  store = await startStoreServer({ dbPath: path.join(dir, 'store.sqlite'), port: 0, log: () => {} });
  ({ proxy, url } = await startProxyProcess());
});

async function startProxyProcess(dataDir = path.join(dir, 'proxy')): Promise<{ proxy: ManagedProcess; url: string }> {
  const p = await startProcess({
    name: 'proxy',
    command: process.execPath,
    args: ['--import', 'tsx', 'proxy/main.ts', '--port', '0', '--data', dataDir, '--store', store.url, '--trainer', trainer.url, '--model', 'local/bigram'],
    cwd: ROOT,
    env: { ...process.env, TINKER_API_KEY: 'tml-local' },
    readyLine: /proxy listening on (http:\/\/\S+)/,
    readyTimeoutMs: 60_000,
  });
  return { proxy: p, url: p.match![1] };
}
after(async () => {
  await proxy?.stop();
  await store?.close();
  await trainer?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('initial policy from --model samples the base model; span recorded under the rollout', async () => {
  const sc = new StoreClient(store.url, { retryDelaysMs: [50], token: '' });
  const rollout = (await sc.startRollout({ input: {} } as any)) as any;
  const r = await post(`${url}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}/v1/chat/completions`, {
    model: 'local/bigram',
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 24,
    temperature: 1,
    n: 2,
    seed: 5,
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-agl-policy'), 'initial:local/bigram');
  assert.equal(r.json.prompt_token_ids[0], 256, 'role_colon with the byte tokenizer starts with <|bos|>');
  assert.equal(r.json.choices.length, 2);
  for (const c of r.json.choices) {
    assert.ok(c.token_ids.length > 0 && c.token_ids.length <= 24);
    assert.equal(c.logprobs.content.length, c.token_ids.length);
    assert.ok(c.logprobs.content.every((e: any) => e.logprob <= 0));
    assert.ok(['stop', 'length'].includes(c.finish_reason));
  }
  const spans = (await sc.querySpans(rollout.rollout_id)) as any;
  const items = Array.isArray(spans) ? spans : spans.items;
  assert.equal(items.length, 1);
  assert.deepEqual(items[0].attributes.response_token_ids, r.json.choices[0].token_ids);
  assert.equal(items[0].attributes['agl.policy.base_model'], 'local/bigram');
});

test('switch to a saved sampler snapshot: the next call is answered by it', async () => {
  const service = new ServiceClient({ baseUrl: trainer.url, apiKey: 'tml-local', futureTimeoutMs: 60_000 });
  try {
    const tc = await service.createLoraTrainingClient('local/bigram', { rank: 4, seed: 1 });
    const samplerPath = await tc.saveWeightsForSampler('000001');
    assert.match(samplerPath, /^tinker:\/\//);
    const s = await post(`${url}/admin/policy`, { switchId: 'batch-1', modelName: 'local/bigram', samplerPath, baseModel: 'local/bigram', renderer: 'role_colon', sampling: { temperature: 0.8, topK: -1, topP: 1, maxTokens: 16 } });
    assert.equal(s.status, 200, s.text);
    assert.equal(s.json.switched, true);
    const r = await post(`${url}/chat/completions`, { messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-agl-policy'), 'batch-1');
    assert.ok(r.json.choices[0].token_ids.length <= 16, 'the policy default maxTokens applies');
    const bad = await post(`${url}/admin/policy`, { switchId: 'batch-x', modelName: 'local/bigram', samplerPath: 'tinker://nope/sampler_weights/1', baseModel: 'local/bigram' });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.code, 'sampler_error');
    const still = await post(`${url}/chat/completions`, { messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
    assert.equal(still.headers.get('x-agl-policy'), 'batch-1', 'a failed switch keeps the current policy');
  } finally {
    await service.close();
  }
});

test('a restarted proxy (kill -9) resumes the last switched policy, not --model', async () => {
  proxy.kill9();
  await proxy.exited;
  ({ proxy, url } = await startProxyProcess());
  const r = await post(`${url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-agl-policy'), 'batch-1');
  const again = await post(`${url}/admin/policy`, { switchId: 'batch-1', modelName: 'local/bigram', samplerPath: 'tinker://other', baseModel: 'local/bigram' });
  assert.equal(again.status, 409, 'the resumed switchId is remembered');
});

test('a saved policy whose sampler no longer exists falls back to --model', async () => {
  const dataDir = path.join(dir, 'proxy-stale');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path.join(dataDir, 'policy.json'), JSON.stringify({ switchId: 'old-run/9', modelName: 'local/bigram', samplerPath: 'tinker://gone:train:0/sampler_weights/000009', baseModel: 'local/bigram', renderer: 'role_colon', sampling: { temperature: 1, topK: -1, topP: 1, maxTokens: 8 } }));
  const other = await startProxyProcess(dataDir);
  try {
    const r = await post(`${other.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-agl-policy'), 'initial:local/bigram');
    assert.match(other.proxy.output(), /initial policy old-run\/9 rejected/);
  } finally {
    await other.proxy.stop();
  }
});
