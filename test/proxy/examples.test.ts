// The example agents of the other agent APIs (agents/examples/hello-apis.ts) against the proxy: each asks the hello
// question with the very prompt tokens the chat example uses (so `npm start -- --example hello-<api>` trains as
// hello does) and scores the answer with the hello reward.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentContext, AgentFunction } from '../../agents/runner';
import { helloAgent } from '../../agents/examples/hello';
import { helloCompletionsAgent, helloMessagesAgent, helloResponsesAgent } from '../../agents/examples/hello-apis';
import { EXAMPLES } from '../../dev/examples';
import { StoreClient } from '../../store/client';
import { startHarness, type Harness } from './helpers';

let h: Harness;
let store: StoreClient;
before(async () => {
  h = await startHarness({ withStore: true, script: () => 'I am 7.' });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
});
after(() => h.close());

async function play(agent: AgentFunction<string>): Promise<{ reward: unknown; prompt: unknown; api: unknown }> {
  const r = await store.startRollout({ task: '7' });
  const endpoint = `${h.proxy.url}/rollout/${r.rollout_id}/attempt/${r.attempt.attempt_id}`;
  const ctx = { llm: { endpoint, model: 'local/tiny-hello', apiKey: null, samplingParameters: {} }, signal: new AbortController().signal } as unknown as AgentContext;
  const reward = await agent('7', ctx);
  const [span] = (await store.querySpans(r.rollout_id)).items;
  return { reward, prompt: span!.attributes.prompt_token_ids, api: span!.attributes['agl.api'] };
}

test('hello through Responses, Messages and Completions: the chat example’s prompt tokens, the hello reward', async () => {
  const chat = await play(helloAgent as AgentFunction<string>);
  assert.equal(chat.reward, 1);
  for (const [agent, api] of [[helloResponsesAgent, 'responses'], [helloMessagesAgent, 'messages'], [helloCompletionsAgent, 'completions']] as const) {
    const got = await play(agent);
    assert.deepEqual(got, { reward: 1, prompt: chat.prompt, api });
  }
});

test('each is an example npm start can train', () => {
  for (const name of ['hello-responses', 'hello-messages', 'hello-completions']) {
    assert.equal(EXAMPLES[name]?.agent, name);
    assert.equal(EXAMPLES[name]?.model, EXAMPLES.hello!.model);
  }
});
