// Agent-lightning 0.3.0 (Python, pinned venv) reads the proxy's spans from the store with its own client and
// adapters: both give triplets with the token ids, the tracer adapter also the logprobs, and the reward emitted
// after the last call is matched to it.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { aglVenv, runPython } from './store-python';
import { startStack } from './proxy-harness';
import type { Stack } from './proxy-harness';
import { post } from '../proxy/helpers';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

test('LlmProxyTraceToTriplet and TracerTraceToTriplet (Python) on proxy spans', { timeout: 900_000 }, async () => {
  const venv = await aglVenv();
  const { rolloutId, attemptId } = await stack.newAttempt();
  const url = `${stack.proxy.url}/rollout/${rolloutId}/attempt/${attemptId}/v1/chat/completions`;
  const a = await post(url, { messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 12 });
  const b = await post(url, { messages: [{ role: 'user', content: 'Say hello.' }, { role: 'assistant', content: a.json.choices[0].message.content }, { role: 'user', content: 'Again.' }], max_tokens: 12 });
  assert.equal(a.status, 200, a.text);
  assert.equal(b.status, 200, b.text);
  const seq = await stack.storeClient.getNextSpanSequenceId(rolloutId, attemptId);
  const now = Date.now() / 1000 + 1;
  const tid = randomBytes(16).toString('hex');
  const sid = randomBytes(8).toString('hex');
  await stack.storeClient.addSpan({
    rollout_id: rolloutId, attempt_id: attemptId, sequence_id: seq, trace_id: tid, span_id: sid, parent_id: null,
    name: 'agentlightning.annotation', status: { status_code: 'OK', description: null },
    attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 0.5 },
    events: [], links: [], start_time: now, end_time: now,
    context: { trace_id: tid, span_id: sid, is_remote: false, trace_state: {} }, parent: null,
    resource: { attributes: {}, schema_url: '' },
  } as any);

  const { stdout } = await runPython(venv.python, 'proxy-agl-adapters.py', [stack.store.url, rolloutId]);
  const r = JSON.parse(stdout.trim().split('\n').at(-1)!);
  assert.deepEqual(r.span_names, ['litellm_request', 'litellm_request', 'agentlightning.annotation']);
  for (const kind of ['proxy', 'tracer']) {
    const t = r[kind];
    assert.equal(t.length, 2, kind);
    assert.deepEqual(t.map((x: any) => x.prompt.token_ids), [a.json.prompt_token_ids, b.json.prompt_token_ids], kind);
    assert.deepEqual(t.map((x: any) => x.response.token_ids), [a.json.choices[0].token_ids, b.json.choices[0].token_ids], kind);
    assert.deepEqual(t.map((x: any) => x.reward), [null, 0.5], kind);
    assert.deepEqual(t.map((x: any) => x.metadata.response_id), [a.json.id, b.json.id], kind);
  }
  assert.deepEqual(r.tracer[0].response.logprobs, a.json.choices[0].logprobs.content);
});
