// The real clients of every agent API against the proxy, on a qwen3_instruct policy whose scripted sampler calls
// the `add` tool first and answers once it sees the tool's result: the `openai` package (Python and Node) on
// Responses and Completions, the OpenAI Agents SDK running a tool-using agent, the `anthropic` package with and
// without streaming. Each client's turns are one span each under its rollout, with the token ids it was
// answered, and become the triplets training reads, exactly as chat calls do.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getTokenizer } from '../../chat';
import { llmProxyTraceToTriplet, tracerTraceToTriplet, DEFAULT_LLM_CALL_MATCH } from '../../rl/adapters';
import type { StoreSpan } from '../../rl/adapters';
import { StoreClient } from '../../store/client';
import { policy, startHarness, type Harness } from '../proxy/helpers';
import { agentApisVenv, NODE_CLIENTS, PY_CLIENTS, PythonAgents, runNodeAgent, type ClientName, type ClientRun } from './agent-apis';

const MODEL = 'Qwen/Qwen3-4B-Instruct-2507';
const qwen = getTokenizer(MODEL);
const API_OF: Record<ClientName, string> = {
  'openai-responses': 'responses', 'agents-sdk': 'responses', 'node-responses': 'responses',
  'openai-completions': 'completions', 'node-completions': 'completions', anthropic: 'messages', 'anthropic-stream': 'messages',
};

const QUESTION = 'What is 2+3?';
let h: Harness;
let store: StoreClient;
const runs = new Map<ClientName, { run: ClientRun; rolloutId: string }>();

before(async () => {
  const python = await PythonAgents.start(await agentApisVenv());
  h = await startHarness({
    withStore: true,
    initial: policy({ switchId: 'q', modelName: MODEL, baseModel: MODEL, renderer: 'qwen3_instruct' }),
    script: (prompt) =>
      qwen.decode(prompt).includes('<tool_response>') ? 'The sum is 5.' : 'Let me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>', // Qwen's format: a newline between text and calls
  });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
  const scoped = async () => {
    const r = await store.startRollout({ task: 'sum' });
    return { rolloutId: r.rollout_id, url: `${h.proxy.url}/rollout/${r.rollout_id}/attempt/${r.attempt.attempt_id}` };
  };
  try {
    await Promise.all(
      [...PY_CLIENTS, ...NODE_CLIENTS].map(async (client) => {
        const s = await scoped();
        const run = client === 'node-responses' || client === 'node-completions' ? runNodeAgent(client, s.url, QUESTION) : python.run(client, s.url, QUESTION);
        runs.set(client, { run: await run, rolloutId: s.rolloutId });
      }),
    );
  } finally {
    await python.close();
  }
});
after(() => h?.close());

function includesRun(seq: number[], run: number[]): boolean {
  return seq.some((_, i) => run.every((t, j) => seq[i + j] === t));
}

const ok = (spans: StoreSpan[]) =>
  spans.filter((s) => s.name === 'litellm_request' && s.status?.status_code === 'OK').sort((a, b) => a.sequence_id - b.sequence_id);

test('the pinned client versions ran', () => {
  assert.deepEqual(runs.get('openai-responses')!.run.versions, { openai: '3.57.0', anthropic: '2.16.0' });
});

for (const client of [...PY_CLIENTS, ...NODE_CLIENTS]) {
  test(`${client}: one span per turn with the token ids it was answered; the triplets training reads are those turns`, async () => {
    const { run, rolloutId } = runs.get(client)!;
    assert.equal(run.answers.length, 2, JSON.stringify(run.notes));
    const spans = ok((await store.querySpans(rolloutId)).items as unknown as StoreSpan[]);
    assert.equal(spans.length, run.answers.length, 'one answered span per turn');
    spans.forEach((s, i) => {
      assert.equal(s.attributes['agl.api'], API_OF[client]);
      assert.deepEqual(s.attributes.prompt_token_ids, run.answers[i]!.prompt_token_ids);
      assert.deepEqual(s.attributes.response_token_ids, run.answers[i]!.token_ids);
    });
    const pairs = run.answers.map((a) => [a.prompt_token_ids, a.token_ids]);
    assert.deepEqual(llmProxyTraceToTriplet(spans).map((t) => [t.prompt.token_ids, t.response.token_ids]), pairs);
    const traced = tracerTraceToTriplet(spans, { llmCallMatch: DEFAULT_LLM_CALL_MATCH, skipEmptyTokenSpans: true });
    assert.deepEqual(traced.map((t) => [t.prompt.token_ids, t.response.token_ids]), pairs);
    assert.ok(traced.every((t, i) => (t.response.logprobs as unknown[]).length === run.answers[i]!.token_ids.length), 'with a logprob per token');
  });
}

test('Responses (Python and Node): a tool call, its output sent back by previous_response_id, streamed as the Responses events', () => {
  const py = runs.get('openai-responses')!.run;
  assert.deepEqual(py.notes.first_output, ['message', 'function_call']);
  assert.equal(py.notes.first_status, 'completed');
  assert.equal(py.answers[1]!.text, 'The sum is 5.', 'the second prompt had the tool result');
  assert.equal(py.notes.continued_from, true);
  assert.deepEqual(py.notes.events, [
    'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
  ]);
  // The continued conversation renders the first answer as it was sampled (instructions are not carried over).
  const [a, b] = py.answers;
  assert.ok(includesRun(b!.prompt_token_ids, a!.token_ids), 'the second prompt holds the first answer token for token');
  const node = runs.get('node-responses')!.run;
  assert.deepEqual(node.notes.first_output, ['message', 'function_call']);
  assert.equal(node.notes.continued_from, true);
  assert.equal(node.notes.events.at(-1), 'response.completed');
  assert.equal(node.answers[1]!.text, 'The sum is 5.');
});

test('Agents SDK: the agent calls add through the proxy, gets its result back and answers', () => {
  const { notes } = runs.get('agents-sdk')!.run;
  assert.equal(notes.final_output, 'The sum is 5.', JSON.stringify(notes));
  assert.deepEqual(notes.outputs, [['message', 'function_call'], ['message']]);
});

test('Messages (with and without streaming): tool_use, then end_turn after the tool_result', () => {
  for (const client of ['anthropic', 'anthropic-stream'] as const) {
    const { run } = runs.get(client)!;
    assert.deepEqual(run.notes.stop_reasons, ['tool_use', 'end_turn'], client);
    assert.equal(run.answers[0]!.text, 'Let me add.');
    assert.equal(run.answers[1]!.text, 'The sum is 5.');
  }
  // The scripted sampler answers both alike: the stream's events carry what the JSON answer carries.
  assert.deepEqual(runs.get('anthropic-stream')!.run.answers, runs.get('anthropic')!.run.answers);
});

test('Completions (Python and Node): a text prompt without chat template, then its token ids streamed', () => {
  for (const client of ['openai-completions', 'node-completions'] as const) {
    const { run } = runs.get(client)!;
    assert.deepEqual(run.answers[0]!.prompt_token_ids, qwen.encode('Q: What is 2+3?\nA:'), `${client}: the text as is, no template`);
    assert.deepEqual(run.answers[1]!.prompt_token_ids, run.answers[0]!.prompt_token_ids);
    assert.equal(run.answers[0]!.text, qwen.decode(run.answers[0]!.token_ids));
    assert.equal(run.notes.finish_reason, 'length');
  }
  assert.equal(runs.get('openai-completions')!.run.notes.usage.completion_tokens, 12);
});
