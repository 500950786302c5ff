// The proxy's spans read by this repo's Agent-lightning adapters: LlmProxyTraceToTriplet as is, and
// TracerTraceToTriplet with llmCallMatch "litellm_request" (TS agents emit no client-side LLM spans).
// Token ids, logprobs, response ids and the reward emitted after the last call come through.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { llmProxyTraceToTriplet, tracerTraceToTriplet } from '../../rl/adapters';
import { StoreClient } from '../../store/client';
import { post, startHarness } from './helpers';
import type { Harness } from './helpers';

let h: Harness;
let sc: StoreClient;
before(async () => {
  h = await startHarness({ withStore: true });
  sc = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
});
after(() => h.close());

test('two calls and a reward: both adapters give two triplets with the ids; the reward goes to the last call', async () => {
  const rollout = (await sc.startRollout({ input: {} } as any)) as any;
  const rid = rollout.rollout_id;
  const aid = rollout.attempt.attempt_id;
  const base = `${h.proxy.url}/rollout/${rid}/attempt/${aid}/v1/chat/completions`;
  const a = await post(base, { messages: [{ role: 'user', content: 'first' }] });
  const b = await post(base, { messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: a.json.choices[0].message.content }, { role: 'user', content: 'second' }] });
  // A reward span as the runner emits it (agl.emit_reward), after the calls.
  const seq = await sc.getNextSpanSequenceId(rid, aid);
  const now = Date.now() / 1000 + 1;
  const tid = randomBytes(16).toString('hex');
  const sid = randomBytes(8).toString('hex');
  await sc.addSpan({
    rollout_id: rid, attempt_id: aid, sequence_id: seq, trace_id: tid, span_id: sid, parent_id: null,
    name: 'agentlightning.annotation', status: { status_code: 'OK', description: null },
    attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 1.0 },
    events: [], links: [], start_time: now, end_time: now,
    context: { trace_id: tid, span_id: sid, is_remote: false, trace_state: {} }, parent: null,
    resource: { attributes: {}, schema_url: '' },
  } as any);
  const spans = ((await sc.querySpans(rid)) as any).items ?? (await sc.querySpans(rid));

  const proxyTriplets = llmProxyTraceToTriplet(spans);
  assert.equal(proxyTriplets.length, 2);
  assert.deepEqual(proxyTriplets.map((t) => t.prompt.token_ids), [a.json.prompt_token_ids, b.json.prompt_token_ids]);
  assert.deepEqual(proxyTriplets.map((t) => t.response.token_ids), [a.json.choices[0].token_ids, b.json.choices[0].token_ids]);
  assert.deepEqual(proxyTriplets.map((t) => t.reward), [null, 1]);
  assert.deepEqual(proxyTriplets.map((t) => t.metadata.response_id), [a.json.id, b.json.id]);

  const tracerTriplets = tracerTraceToTriplet(spans, { llmCallMatch: 'openai\\.chat\\.completion|litellm_request', skipEmptyTokenSpans: true });
  assert.equal(tracerTriplets.length, 2);
  assert.deepEqual(tracerTriplets.map((t) => t.response.token_ids), [a.json.choices[0].token_ids, b.json.choices[0].token_ids]);
  assert.deepEqual(tracerTriplets[1].response.logprobs, b.json.choices[0].logprobs.content);
  assert.deepEqual(tracerTriplets.map((t) => t.reward), [null, 1]);
  assert.deepEqual((tracerTriplets[0].prompt.raw_content as any[])[0], { role: 'user', content: 'first' });
});
