// Rollout-scoped calls write one span each to the real store, under the rollout and attempt of the URL,
// with a sequence id taken at request start and the attributes both Agent-lightning adapters read.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { StoreClient } from '../../store/client';
import { SamplerError } from '../../proxy/sampler';
import { echoScript, startHarness, post } from './helpers';
import type { Harness } from './helpers';

let h: Harness;
let store: StoreClient;
before(async () => {
  h = await startHarness({
    withStore: true,
    script: (prompt, params, i) => {
      if (Buffer.from(prompt.filter((t) => t < 256)).toString('utf8').includes('FAIL')) throw new SamplerError('scripted failure', false);
      return echoScript(prompt, params, i);
    },
  });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
});
after(() => h.close());

async function spansOf(rolloutId: string): Promise<any[]> {
  const res = await fetch(`${h.store!.url}/v1/agl/spans/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rollout_id: rolloutId, limit: -1, offset: 0, sort_by: 'sequence_id', sort_order: 'asc' }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as any).items;
}

test('one span per call under the URL rollout/attempt, both URL forms, sequence ids ascending', async () => {
  const rollout = await store.startRollout({ input: { q: 1 } } as any);
  const rid: string = (rollout as any).rollout_id;
  const aid: string = (rollout as any).attempt.attempt_id;
  const base = `${h.proxy.url}/rollout/${rid}/attempt/${aid}`;
  const messages = [{ role: 'user', content: 'Hi there' }];
  const a = await post(`${base}/v1/chat/completions`, { messages, temperature: 0.25 });
  const b = await post(`${base}/chat/completions`, { messages: [...messages, { role: 'assistant', content: 'Hello 0! t=0.25' }, { role: 'user', content: 'Again' }] });
  assert.equal(a.status, 200, a.text);
  assert.equal(b.status, 200, b.text);
  const seqA = Number(a.headers.get('x-agl-sequence-id'));
  const seqB = Number(b.headers.get('x-agl-sequence-id'));
  assert.ok(seqB > seqA);

  const spans = (await spansOf(rid)).filter((s) => s.name === 'litellm_request');
  assert.equal(spans.length, 2);
  const [s1, s2] = spans;
  assert.equal(s1.attempt_id, aid);
  assert.deepEqual([s1.sequence_id, s2.sequence_id], [seqA, seqB]);
  const at = s1.attributes;
  assert.deepEqual(at.prompt_token_ids, a.json.prompt_token_ids);
  assert.deepEqual(at.response_token_ids, a.json.choices[0].token_ids);
  assert.equal(at['gen_ai.response.id'], a.json.id);
  assert.deepEqual(JSON.parse(at['logprobs.content']), a.json.choices[0].logprobs.content);
  assert.deepEqual(at.response_logprobs, a.json.choices[0].logprobs.content.map((e: any) => e.logprob));
  assert.equal(at['gen_ai.prompt.0.role'], 'user');
  assert.equal(at['gen_ai.prompt.0.content'], 'Hi there');
  assert.equal(at['gen_ai.completion.0.content'], 'Hello 0! t=0.25');
  assert.equal(at['gen_ai.completion.0.finish_reason'], 'stop');
  assert.equal(at['gen_ai.request.temperature'], 0.25);
  assert.equal(at['agl.policy.switch_id'], 'p0');
  assert.equal(at['agl.policy.base_model'], 'local/tiny-hello');
  assert.equal(s1.status.status_code, 'OK');
  assert.ok(s1.start_time <= s1.end_time);
  // Multi-turn: the second prompt extends the first prompt plus the first response.
  const p1 = at.prompt_token_ids as number[];
  assert.deepEqual(s2.attributes.prompt_token_ids.slice(0, p1.length), p1);
});

test('unscoped calls write no span; x-rollout-id/x-attempt-id headers scope them', async () => {
  const rollout = (await store.startRollout({ input: {} } as any)) as any;
  const rid = rollout.rollout_id;
  await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'x' }] });
  assert.equal((await spansOf(rid)).length, 0);
  const r = await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'x' }] }, { 'x-rollout-id': rid, 'x-attempt-id': rollout.attempt.attempt_id });
  assert.equal(r.status, 200);
  assert.equal((await spansOf(rid)).length, 1);
});

test('a sampler failure answers 502 and still records an ERROR span without token ids', async () => {
  const rollout = (await store.startRollout({ input: {} } as any)) as any;
  const base = `${h.proxy.url}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}`;
  const bad = await post(`${base}/v1/chat/completions`, { messages: [{ role: 'assistant', content: 'x', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '[1]' } }] }] });
  assert.equal(bad.status, 400, 'validation errors happen before a sequence id is taken');
  const r = await post(`${base}/v1/chat/completions`, { messages: [{ role: 'user', content: 'please FAIL' }] });
  assert.equal(r.status, 502, r.text);
  assert.match(r.json.error.message, /sampler: scripted failure/);
  const spans = await spansOf(rollout.rollout_id);
  assert.equal(spans.length, 1);
  assert.equal(spans[0].status.status_code, 'ERROR');
  assert.equal(spans[0].attributes['error.status'], 502);
  assert.equal(spans[0].attributes.prompt_token_ids, undefined);
});
