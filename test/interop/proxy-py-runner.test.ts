// A Python Agent-lightning v0.3 runner (AgentOps tracer) whose agent calls the proxy through a `proxy_llm`
// resource: through both adapters — ours and Agent-lightning's own (Python) — its rollouts yield triplets with
// token ids (and logprobs from the agent-side spans or the proxy span), the reward on the call. The proxy samples
// the local trainer (bigram engine); the store is ours.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { llmProxyTraceToTriplet, tracerTraceToTriplet } from '../../rl/adapters';
import { aglVenv, runPython } from './store-python';
import { startStack } from './proxy-harness';
import type { Stack } from './proxy-harness';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

test('Python runner → proxy → store: both adapters give triplets with ids, logprobs and the reward', { timeout: 900_000 }, async () => {
  const venv = await aglVenv();
  const c = stack.storeClient;
  await c.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: stack.proxy.url, model: 'local/bigram', api_key: null, sampling_parameters: {} } });
  const rollouts = [await c.enqueueRollout({ name: 'Alice', reward: 1 }, { mode: 'train' }), await c.enqueueRollout({ name: 'Bob', reward: 0.25 }, { mode: 'train' })];
  const { stdout } = await runPython(venv.python, 'proxy-py-runner.py', [stack.store.url, '2', ...rollouts.map((r) => r.rollout_id)]);
  assert.match(stdout, /runner finished/);
  assert.match(stdout, /endpoint=http:\/\/127\.0\.0\.1:\d+\/rollout\/[^/]+\/attempt\/[^/\s]+ ->/);

  for (const r of rollouts) {
    const got = await c.getRolloutById(r.rollout_id);
    assert.equal(got?.status, 'succeeded');
    const spans = (await c.querySpans(r.rollout_id, 'latest')).items;
    const proxySpans = spans.filter((s) => s.name === 'litellm_request');
    assert.equal(proxySpans.length, 1, `one proxy span in ${spans.map((s) => s.name)}`);
    const want = r.input as { reward: number };

    const fromProxy = llmProxyTraceToTriplet(spans);
    assert.equal(fromProxy.length, 1);
    assert.ok(fromProxy[0].prompt.token_ids!.length > 0 && fromProxy[0].response.token_ids!.length > 0);
    assert.equal(fromProxy[0].reward, want.reward);

    // The seed's default adapter: agent-side `openai.chat.completion` spans (AgentOps + Agent-lightning patch).
    const fromTracer = tracerTraceToTriplet(spans, { skipEmptyTokenSpans: true });
    assert.equal(fromTracer.length, 1, `agent-side LLM span in ${spans.map((s) => s.name)}`);
    assert.deepEqual(fromTracer[0].prompt.token_ids, fromProxy[0].prompt.token_ids);
    assert.deepEqual(fromTracer[0].response.token_ids, fromProxy[0].response.token_ids);
    assert.deepEqual(fromTracer[0].response.logprobs!.map((e) => e.logprob), proxySpans[0].attributes.response_logprobs);
    assert.equal(fromTracer[0].reward, want.reward);
    assert.equal(fromTracer[0].metadata.response_id, proxySpans[0].attributes['gen_ai.response.id']);

    // Agent-lightning's own adapters, in Python, on the same spans.
    const line = stdout.split('\n').find((l) => l.startsWith('ADAPTED ') && l.includes(r.rollout_id));
    assert.ok(line, 'the Python adapters ran for this rollout');
    const py = JSON.parse(line.slice('ADAPTED '.length));
    for (const kind of ['proxy', 'tracer', 'both'] as const) {
      assert.equal(py[kind].length, 1, `${kind}: one triplet`);
      assert.deepEqual(py[kind][0].prompt.token_ids, fromProxy[0].prompt.token_ids, kind);
      assert.deepEqual(py[kind][0].response.token_ids, fromProxy[0].response.token_ids, kind);
      assert.equal(py[kind][0].reward, want.reward, kind);
    }
    assert.deepEqual(py.tracer[0].response.logprobs, fromTracer[0].response.logprobs);
    assert.equal(py.both[0].response.logprobs.length, py.both[0].response.token_ids.length, 'logprobs also via the proxy span');
  }
});
