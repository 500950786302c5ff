// POST /v1/messages with a scripted qwen3_instruct sampler: the same internal call as chat, tool_use and
// tool_result blocks, stop sequences and max_tokens as Anthropic reports them, its SSE events, its error format.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getTokenizer } from '../../chat';
import { StoreClient } from '../../store/client';
import { namedEvents, policy, post, startHarness, type Harness } from './helpers';

const MODEL = 'Qwen/Qwen3-4B-Instruct-2507';
const qwen = getTokenizer(MODEL);
const script = (prompt: number[]) =>
  qwen.decode(prompt).includes('<tool_response>') ? 'The sum is 5. Done.' : 'Let me add.<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>';
const ADD = { name: 'add', description: 'Add.', input_schema: { type: 'object', properties: { a: { type: 'integer' } } } };
const ADD_CHAT = { type: 'function', function: { name: 'add', description: 'Add.', parameters: ADD.input_schema } };

let h: Harness;
let store: StoreClient;
before(async () => {
  h = await startHarness({ withStore: true, initial: policy({ switchId: 'q', modelName: MODEL, baseModel: MODEL, renderer: 'qwen3_instruct' }), script });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
});
after(() => h.close());

const messages = (body: unknown, base = h.proxy.url, headers: Record<string, string> = {}) => post(`${base}/v1/messages`, body, headers);
const ask = { model: 'm', max_tokens: 64, system: 'Use add.', messages: [{ role: 'user', content: 'What is 2+3?' }], tools: [ADD] };

test('a message is the chat call of the same conversation; the tool call comes back as a tool_use block', async () => {
  const r = await messages(ask);
  assert.equal(r.status, 200, r.text);
  const c = await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'system', content: 'Use add.' }, { role: 'user', content: 'What is 2+3?' }], tools: [ADD_CHAT] });
  assert.deepEqual(r.json.prompt_token_ids, c.json.prompt_token_ids);
  assert.deepEqual(r.json.token_ids, c.json.choices[0].token_ids);
  assert.equal(r.json.type, 'message');
  assert.match(r.json.id, /^msg_/);
  assert.equal(r.json.stop_reason, 'tool_use');
  assert.equal(r.json.content[0].text, 'Let me add.');
  const use = r.json.content[1];
  assert.equal(use.type, 'tool_use');
  assert.match(use.id, /^toolu_/);
  assert.deepEqual([use.name, use.input], ['add', { a: 2, b: 3 }]);
  assert.deepEqual(r.json.usage, { input_tokens: r.json.prompt_token_ids.length, output_tokens: r.json.token_ids.length, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
});

test('tool_use and tool_result blocks render as the assistant tool call and the tool message', async () => {
  const first = await messages(ask);
  const use = first.json.content[1];
  const r = await messages({
    ...ask,
    messages: [...ask.messages, { role: 'assistant', content: first.json.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: '5' }] }] }],
  });
  const chat = await post(`${h.proxy.url}/v1/chat/completions`, {
    messages: [
      { role: 'system', content: 'Use add.' },
      { role: 'user', content: 'What is 2+3?' },
      { role: 'assistant', content: 'Let me add.', tool_calls: [{ id: use.id, type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
      { role: 'tool', content: '5', tool_call_id: use.id },
    ],
    tools: [ADD_CHAT],
  });
  assert.deepEqual(r.json.prompt_token_ids, chat.json.prompt_token_ids);
  assert.deepEqual(r.json.content, [{ type: 'text', text: 'The sum is 5. Done.' }]);
  assert.equal(r.json.stop_reason, 'end_turn');
  assert.equal(r.json.stop_sequence, null);
});

test('stop_sequences and max_tokens end a message as Anthropic says; a client retry keeps the stop sequence', async () => {
  const rollout = await store.startRollout({ task: 'm' });
  const base = `${h.proxy.url}/rollout/${rollout.rollout_id}/attempt/${rollout.attempt.attempt_id}`;
  const body = { ...ask, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: '5' }] }], stop_sequences: ['Done', 'zz'] };
  const stopped = await messages(body, base);
  assert.deepEqual([stopped.json.stop_reason, stopped.json.stop_sequence, stopped.json.content[0].text], ['stop_sequence', 'Done', 'The sum is 5. ']);
  const retried = await messages(body, base, { 'x-stainless-retry-count': '1' });
  assert.deepEqual(retried.json, stopped.json, 'the recorded answer, stop sequence included');
  const spans = (await store.querySpans(rollout.rollout_id)).items;
  assert.equal(spans.length, 1);
  assert.equal(spans[0]!.attributes['agl.api'], 'messages');
  const cut = await messages({ ...ask, max_tokens: 2 });
  assert.deepEqual([cut.json.stop_reason, cut.json.token_ids.length], ['max_tokens', 2]);
});

test("stream: Anthropic's events, text and tool_use blocks, token ids at message_start and message_delta", async () => {
  const plain = await messages(ask);
  const r = await messages({ ...ask, stream: true });
  assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = namedEvents(r.text);
  assert.deepEqual(events.map((e) => e.type), [
    'message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop',
    'message_delta', 'message_stop',
  ]);
  assert.deepEqual(events[0].message.prompt_token_ids, plain.json.prompt_token_ids);
  assert.deepEqual(events[0].message.content, []);
  assert.deepEqual(events[5].content_block, { type: 'tool_use', id: plain.json.content[1].id, name: 'add', input: {} });
  assert.deepEqual(JSON.parse(events[6].delta.partial_json), { a: 2, b: 3 });
  assert.deepEqual(events[8].delta, { stop_reason: 'tool_use', stop_sequence: null });
  assert.deepEqual(events[8].token_ids, plain.json.token_ids);
});

const BAD: [string, unknown, RegExp][] = [
  ['not JSON', '{nope', /not valid JSON/],
  ['no max_tokens', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, /max_tokens: Field required/],
  ['no model', { max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, /model: Field required/],
  ['an image block without a source type', { ...ask, messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }, /source.type must be "base64" or "url"/],
  ['a document block', { ...ask, messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }, /cannot be rendered/],
  ['a prefill', { ...ask, messages: [...ask.messages, { role: 'assistant', content: 'The answer is' }] }, /prefill/],
  ['temperature above 1', { ...ask, temperature: 1.5 }, /temperature must be at least 0 and at most 1/],
  ['thinking on for a renderer that does not reason', { ...ask, thinking: { type: 'enabled', budget_tokens: 1024 } }, /thinking: thinking on cannot be honoured: the run's renderer qwen3_instruct renders no reasoning.*renderer qwen3 \(not among Qwen\S+ recommended renderers\) renders thinking on/],
  ['tool_choice any', { ...ask, tool_choice: { type: 'any' } }, /cannot be enforced/],
  ['a server tool', { ...ask, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, /only custom tools/],
  ['an unknown field', { ...ask, n: 2 }, /not a Messages parameter/],
];
for (const [name, body, message] of BAD) {
  test(`400 in Anthropic's error format: ${name}`, async () => {
    const r = await messages(body);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.match(r.json.error.message, message);
  });
}

test("a wrong method is a 405 in Anthropic's format", async () => {
  const r = await fetch(`${h.proxy.url}/v1/messages`);
  assert.equal(r.status, 405);
  assert.equal(((await r.json()) as any).type, 'error');
});
