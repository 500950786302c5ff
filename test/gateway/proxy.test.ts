// The gateway's /proxy routes: upstream's checks in upstream's order, pause (429 + Retry-After) and resume,
// calls in flight, registered model endpoints (forced fields, pinning, retries, 502/504), and a run's rollout
// forwarded to the project's real proxy on its rollout-scoped URL, so the span lands under the store attempt.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { DEFAULT_SAMPLING } from '../../proxy/policy-spec';
import { policy, startHarness, type Harness } from '../proxy/helpers';
import { startGatewayStore, type GatewayStore } from './helpers';

interface Seen { url: string; body: any; headers: http.IncomingHttpHeaders }

/** An OpenAI-compatible stand-in for a model server: answers after `failures` 503s, or holds answers until released. */
async function fakeUpstream(opts: { failures?: number; hold?: boolean } = {}) {
  const seen: Seen[] = [];
  let failures = opts.failures ?? 0;
  const held: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      seen.push({ url: req.url!, body: JSON.parse(text), headers: req.headers });
      if (failures-- > 0) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"busy"}');
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        object: 'chat.completion', prompt_token_ids: [1, 2], usage: { total_tokens: 3 },
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop', token_ids: [7], logprobs: { content: [{ logprob: -0.1 }] }, routed_experts: [[0, 1]] }],
      }));
      if (opts.hold) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    seen, server,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    release: () => held.splice(0).forEach((f) => f()),
    held: () => held.length,
  };
}

let g: GatewayStore;
before(async () => { g = await startGatewayStore({ gateway: { retryDelayMs: () => 5, upstreamTimeoutMs: 300 } }); });
after(() => g.close());

const chat = (id: string, body: unknown, mode = 'train', path = 'chat/completions') => g.api('POST', `/proxy/rollout/${id}/attempt/0/mode/${mode}/openai/v1/${path}`, body);
const MSG = { messages: [{ role: 'user', content: 'hello' }] };

test('checks in upstream order: mode and path 404, rollout 404, JSON 400, no endpoint 503, paused 429, stream 400', async () => {
  await g.api('POST', '/api/rollouts', [{ rollout_id: 'q1', input: 1 }]);
  assert.deepEqual((await chat('q1', MSG, 'eval')).json, { detail: 'Unsupported proxy mode: eval' });
  assert.deepEqual((await chat('q1', MSG, 'train', 'embeddings')).json, { detail: 'Unsupported upstream path: embeddings' });
  assert.deepEqual((await chat('ghost', MSG)).json, { detail: 'Rollout not found: ghost' });
  const badJson = await chat('q1', '{"messages": [');
  assert.deepEqual([badJson.status, badJson.json], [400, { detail: 'Invalid JSON in request body' }]);
  assert.deepEqual((await chat('q1', [1, 2])).json, { detail: 'Request body must be a JSON object' });
  const none = await chat('q1', MSG);
  assert.deepEqual([none.status, none.json], [503, { detail: "No servers available for model 'Qwen/Qwen2.5-7B-Instruct'" }]);
  const up = await fakeUpstream();
  try {
    await g.api('POST', '/api/models', [{ model: 'Qwen/Qwen2.5-7B-Instruct', endpoint: up.url() }]);
    const paused = await g.api('POST', '/proxy/pause', { retry_after_seconds: 7, reason: 'weight sync' });
    assert.deepEqual(paused.json, { paused: true, retry_after_seconds: 7, reason: 'weight sync', inflight: 0 });
    const refused = await chat('q1', MSG);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '7');
    assert.equal(refused.headers.get('x-agl-paused'), 'true');
    assert.deepEqual(refused.json, { error: 'gateway paused', reason: 'weight sync' });
    assert.deepEqual((await g.api('POST', '/proxy/resume')).json, { paused: false, retry_after_seconds: 7, reason: null, inflight: 0 });
    assert.deepEqual((await chat('q1', { ...MSG, stream: true })).json, { detail: 'Streaming responses are not supported' });
    assert.equal(up.seen.length, 0, 'nothing reached the model server');
    assert.equal((await g.api('POST', '/proxy/pause', { retry_after_seconds: 'soon' })).status, 422);
  } finally {
    await g.api('DELETE', '/api/models');
    up.server.close();
  }
});

test('registered endpoints: forced fields, 503s retried, the answer captured as a model_request event', async () => {
  const up = await fakeUpstream({ failures: 2 });
  try {
    assert.equal((await g.api('POST', '/api/models', [{ model: 'Qwen/Qwen2.5-7B-Instruct', endpoint: up.url(), version: 4 }])).status, 201);
    await g.api('POST', '/api/rollouts', [{ rollout_id: 'r1', input: 1 }, { rollout_id: 'v1', input: 1, is_train: false }]);
    const res = await chat('r1', { ...MSG, model: 'mine', temperature: 0.1 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json.choices[0].token_ids, [7]);
    assert.ok(!('routed_experts' in res.json.choices[0]), 'routed experts go to the event, not the agent');
    assert.equal(up.seen.length, 3, 'two 503s, then the answer');
    const last = up.seen[2]!;
    assert.equal(last.url, '/v1/chat/completions');
    assert.deepEqual({ ...last.body, messages: undefined }, { model: 'Qwen/Qwen2.5-7B-Instruct', temperature: 1, return_token_ids: true, logprobs: true, messages: undefined });
    assert.equal(last.headers['x-stainless-retry-count'], '2');
    assert.equal((await g.api('GET', '/api/rollouts/r1')).json.rollout.status.state, 'running', 'its first call started it');
    const [event] = (await g.api('GET', '/api/rollouts/r1/events')).json;
    assert.equal(event.event_type, 'model_request');
    assert.equal(event.data.retry_count, 2);
    assert.equal(event.data.http_status, 200);
    assert.equal(event.data.model_version, 4);
    assert.deepEqual(event.data.routed_experts, [[0, 1]]);
    assert.deepEqual(event.data.usage, { total_tokens: 3 });
    assert.equal(event.data.finish_reason, 'stop');
    await chat('v1', { ...MSG, temperature: 0.1 }, 'val');
    assert.deepEqual([up.seen[3]!.body.temperature, 'logprobs' in up.seen[3]!.body], [0.7, false]);
  } finally {
    await g.api('DELETE', '/api/models');
    up.server.close();
  }
});

test('a rollout stays on one of several endpoints: the first 8 bytes of sha256(rollout id), pool sorted by URL', async () => {
  const ups = [await fakeUpstream(), await fakeUpstream()];
  try {
    await g.api('POST', '/api/models', ups.map((u) => ({ model: 'Qwen/Qwen2.5-7B-Instruct', endpoint: u.url() })));
    const pool = ups.map((u) => u.url()).sort();
    const ids = ['pin-a', 'pin-b', 'pin-c', 'pin-d'];
    await g.api('POST', '/api/rollouts', ids.map((rollout_id) => ({ rollout_id, input: 1 })));
    for (const id of ids) {
      await chat(id, MSG);
      await chat(id, MSG);
      const want = pool[Number(createHash('sha256').update(id).digest().readBigUInt64BE(0) % 2n)];
      const events = (await g.api('GET', `/api/rollouts/${id}/events`)).json;
      assert.deepEqual(events.map((e: any) => e.data.server.endpoint), [want, want], id);
    }
    assert.equal(ups[0]!.seen.length + ups[1]!.seen.length, 8);
    for (const u of ups) assert.equal(new Set(u.seen.map((s) => s.headers['x-rollout-id'])).size * 2, u.seen.length, 'both calls of a rollout on one endpoint');
  } finally {
    await g.api('DELETE', '/api/models');
    for (const u of ups) u.server.close();
  }
});

test('a model server that never answers is 504 after the retries; one that refuses connections 502', async () => {
  const up = await fakeUpstream({ hold: true });
  try {
    await g.api('POST', '/api/models', [{ model: 'Qwen/Qwen2.5-7B-Instruct', endpoint: up.url() }]);
    await g.api('POST', '/api/rollouts', [{ rollout_id: 'slow1', input: 1 }]);
    const res = await chat('slow1', MSG);
    assert.deepEqual([res.status, res.json], [504, { detail: 'Upstream model server timed out' }]);
    assert.equal(up.seen.length, 6);
    await g.api('DELETE', '/api/models');
    await g.api('POST', '/api/models', [{ model: 'Qwen/Qwen2.5-7B-Instruct', endpoint: 'http://127.0.0.1:9/v1' }]);
    assert.deepEqual((await chat('slow1', MSG)).json, { detail: 'Upstream model server request failed' });
  } finally {
    up.release();
    await g.api('DELETE', '/api/models');
    up.server.close();
  }
});

test('/proxy/state counts calls in flight; a pause lets them finish and refuses new ones', async () => {
  const up = await fakeUpstream({ hold: true });
  try {
    await g.api('POST', '/api/models', [{ model: 'Qwen/Qwen2.5-7B-Instruct', endpoint: up.url() }]);
    await g.api('POST', '/api/rollouts', [{ rollout_id: 'f1', input: 1 }]);
    const call = chat('f1', MSG);
    for (let i = 0; i < 200 && up.held() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await g.api('GET', '/proxy/state')).json.inflight, 1);
    await g.api('POST', '/proxy/pause', {});
    assert.equal((await chat('f1', MSG)).status, 429);
    up.release();
    assert.equal((await call).status, 200, 'the call in flight finished');
    assert.deepEqual((await g.api('GET', '/proxy/state')).json, { paused: true, retry_after_seconds: 5, reason: null, inflight: 0 });
  } finally {
    await g.api('POST', '/proxy/resume');
    await g.api('DELETE', '/api/models');
    up.server.close();
  }
});

test("a run's rollout goes to the run's proxy on its rollout-scoped URL: one span under the store attempt, the run's temperature", async () => {
  const h: Harness = await startHarness({ withStore: true });
  try {
    const store = h.store!;
    const spec = policy({ switchId: 'agl1-test', sampling: { ...DEFAULT_SAMPLING, temperature: 0.6 } });
    const llm = { resource_type: 'proxy_llm' as const, endpoint: `${h.proxy.url}/v1`, model: spec.modelName, api_key: null, sampling_parameters: {}, agl_policy: spec as never };
    await fetch(`${store.url}/v1/agl/resources/res-agl1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ main_llm: llm }) });
    const api = (method: string, path: string, body?: unknown) => fetch(store.url + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({ status: r.status, json: await r.json() as any }));
    const run = await fetch(`${store.url}/v1/agl/queues/rollouts/enqueue`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rollouts: [{ input: '3', mode: 'train', resources_id: 'res-agl1', metadata: { agl1: { config: { local: { agent_class: 'a:B', env_map: {} }, k8s: null } } } }] }),
    }).then((r) => r.json() as Promise<any[]>);
    const rid = run[0].rollout_id;
    await api('PATCH', `/api/rollouts/${rid}`, { status: { state: 'running', last_attempt_id: '0' } });
    const res = await api('POST', `/proxy/rollout/${rid}/attempt/0/mode/train/openai/v1/chat/completions`, { model: 'whatever', temperature: 0.3, ...MSG });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.match(res.json.choices[0].message.content, /t=0\.6/, "the run's policy set the temperature, not the agent");
    const attempt = (await api('GET', `/v1/agl/rollouts/${rid}`)).json.attempt;
    const spans = (await api('POST', '/v1/agl/spans/search', { rollout_id: rid, attempt_id: attempt.attempt_id })).json.items;
    const calls = spans.filter((s: any) => Array.isArray(s.attributes.response_token_ids));
    assert.equal(calls.length, 1, 'one span for the call, under the attempt');
    assert.deepEqual(calls[0].attributes.prompt_token_ids, res.json.prompt_token_ids);
    assert.deepEqual(calls[0].attributes.response_token_ids, res.json.choices[0].token_ids);
    const [triplet] = (await api('GET', `/api/rollouts/${rid}/events?format=triplet`)).json;
    assert.deepEqual(triplet.data.response_token_ids, res.json.choices[0].token_ids);
    assert.equal(triplet.data.response_log_probs.length, res.json.choices[0].token_ids.length);
    assert.deepEqual(triplet.data.server, { model: spec.modelName, version: null });
  } finally {
    await h.close();
  }
});
