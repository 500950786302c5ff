// A client's retry of a rollout-scoped call whose answer was recorded but never reached it (the proxy died after
// the store took the span, or the connection broke) gets the recorded answer back: one turn, one span, and the
// agent sees what training sees. Driven by the real `openai` npm client, which retries on its own and numbers
// its retries in `x-stainless-retry-count`.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { StoreClient } from '../../store/client';
import { startHarness, post } from './helpers';
import type { Harness } from './helpers';

let h: Harness;
let store: StoreClient;
let cutter: http.Server;
let cutNext = 0;
let seenRetryHeaders: string[] = [];

before(async () => {
  // The sampler's answers differ from call to call, so a second sample could never pass for the first.
  let calls = 0;
  h = await startHarness({ withStore: true, script: () => `answer number ${++calls}` });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
  // In front of the proxy: forwards every request; while cutNext > 0, the answer is dropped and the connection cut.
  cutter = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    seenRetryHeaders.push(String(req.headers['x-stainless-retry-count'] ?? ''));
    const upstream = await fetch(h.proxy.url + req.url, {
      method: req.method,
      headers: { 'content-type': 'application/json', 'x-stainless-retry-count': String(req.headers['x-stainless-retry-count'] ?? '0') },
      body: Buffer.concat(chunks),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await upstream.text();
    if (cutNext > 0) {
      cutNext--;
      req.socket.destroy();
      return;
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => cutter.listen(0, '127.0.0.1', r));
});

after(async () => {
  cutter.closeAllConnections();
  await new Promise((r) => cutter.close(r));
  await h.close();
});

const answered = async (rolloutId: string) =>
  (await store.querySpans(rolloutId)).items.filter((s) => s.name === 'litellm_request' && s.status.status_code === 'OK');

test('the openai client retries a call whose answer was lost and gets the recorded answer; one span', async () => {
  const rollout = await store.startRollout({ task: 'lost' });
  const base = `http://127.0.0.1:${(cutter.address() as AddressInfo).port}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}/v1`;
  const client = new OpenAI({ baseURL: base, apiKey: 'dummy', maxRetries: 2, timeout: 20_000 });
  seenRetryHeaders = [];
  cutNext = 1;
  const res = await client.chat.completions.create({ model: 'local/tiny-hello', messages: [{ role: 'user', content: 'Say hi' }] });
  assert.deepEqual(seenRetryHeaders, ['0', '1'], 'the client sent the request twice, the second time as a retry');
  const spans = await answered(rollout.rollout_id);
  assert.equal(spans.length, 1, 'one answered span for one turn');
  assert.equal(res.id, spans[0]!.attributes['gen_ai.response.id']);
  assert.equal(res.choices[0]!.message.content, spans[0]!.attributes['gen_ai.completion.0.content']);
  assert.equal(res.choices[0]!.message.content, 'answer number 1', 'the first sample, not a second one');
  assert.deepEqual((res as unknown as { choices: { token_ids: number[] }[] }).choices[0]!.token_ids, spans[0]!.attributes['agl.completion.0.token_ids']);
});

test('without the retry mark, or with another body, a call samples afresh', async () => {
  const rollout = await store.startRollout({ task: 'fresh' });
  const url = `${h.proxy.url}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}/v1/chat/completions`;
  const body = { messages: [{ role: 'user', content: 'Again?' }] };
  const first = await post(url, body);
  const again = await post(url, body);
  assert.notEqual(again.json.id, first.json.id, 'the same question asked again is a new turn');
  const other = await post(url, { messages: [{ role: 'user', content: 'Something else' }] }, { 'x-stainless-retry-count': '1' });
  assert.ok(![first.json.id, again.json.id].includes(other.json.id), 'a retry of a request never answered samples');
  const retried = await post(url, body, { 'x-stainless-retry-count': '2' });
  assert.equal(retried.json.id, again.json.id, 'a retry is answered with the latest recorded answer to that request');
  assert.equal(retried.headers.get('x-agl-sequence-id'), again.headers.get('x-agl-sequence-id'));
  assert.equal((await answered(rollout.rollout_id)).length, 3);
});

test('a retry sent while the first try is still sampling waits for it and gets its answer', async () => {
  let calls = 0;
  const slow = await startHarness({ withStore: true, delayMs: 1500, script: () => `slow answer ${++calls}` });
  try {
    const slowStore = new StoreClient(slow.store!.url, { retryDelaysMs: [50], token: '' });
    const rollout = await slowStore.startRollout({ task: 'impatient' });
    const url = `${slow.proxy.url}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}/v1/chat/completions`;
    const body = { messages: [{ role: 'user', content: 'Take your time' }] };
    const first = post(url, body); // the client stops waiting for this one...
    await new Promise((r) => setTimeout(r, 300));
    const retry = await post(url, body, { 'x-stainless-retry-count': '1' }); // ...and asks again
    assert.equal(retry.status, 200, retry.text);
    assert.equal(retry.json.id, (await first).json.id);
    assert.equal(calls, 1, 'sampled once');
    const spans = (await slowStore.querySpans(rollout.rollout_id)).items.filter((s) => s.name === 'litellm_request');
    assert.equal(spans.length, 1);
  } finally {
    await slow.close();
  }
});
