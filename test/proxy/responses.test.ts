// POST /v1/responses with a scripted qwen3_instruct sampler: the same internal call as chat (the prompt of a
// response is the chat prompt of the same conversation), items, tools, incomplete answers, the event stream,
// previous_response_id from memory and from the store (a restarted proxy, another attempt), and its 400s.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getTokenizer } from '../../chat';
import { startProxy } from '../../proxy/server';
import { StoreSpanSink } from '../../proxy/span-sink';
import { StoreClient } from '../../store/client';
import { namedEvents, policy, post, assertOpenAiBadRequest, startHarness, type Harness } from './helpers';

const MODEL = 'Qwen/Qwen3-4B-Instruct-2507';
const qwen = getTokenizer(MODEL);
const QWEN = policy({ switchId: 'q', modelName: MODEL, baseModel: MODEL, renderer: 'qwen3_instruct' });
const script = (prompt: number[]) =>
  qwen.decode(prompt).includes('<tool_response>') ? 'The sum is 5.' : 'Let me add.<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>';
const ADD = { type: 'function', name: 'add', description: 'Add.', parameters: { type: 'object', properties: { a: { type: 'integer' } } } };
const ADD_CHAT = { type: 'function', function: { name: 'add', description: 'Add.', parameters: ADD.parameters } };

let h: Harness;
let store: StoreClient;
before(async () => {
  h = await startHarness({ withStore: true, initial: QWEN, script });
  store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
});
after(() => h.close());

const responses = (body: unknown, base = h.proxy.url, headers: Record<string, string> = {}) => post(`${base}/v1/responses`, body, headers);
const chat = (body: unknown) => post(`${h.proxy.url}/v1/chat/completions`, body);
async function scoped(): Promise<{ base: string; rid: string; aid: string }> {
  const r = await store.startRollout({ task: 'r' });
  return { base: `${h.proxy.url}/rollout/${r.rollout_id}/attempt/${r.attempt.attempt_id}`, rid: r.rollout_id, aid: r.attempt.attempt_id };
}

test('a response is the chat call of the same conversation: same prompt, the answer as a message and a function call', async () => {
  const r = await responses({ model: 'm', instructions: 'Use add.', input: 'What is 2+3?', tools: [ADD] });
  assert.equal(r.status, 200, r.text);
  const c = await chat({ messages: [{ role: 'system', content: 'Use add.' }, { role: 'user', content: 'What is 2+3?' }], tools: [ADD_CHAT] });
  assert.deepEqual(r.json.prompt_token_ids, c.json.prompt_token_ids);
  assert.deepEqual(r.json.token_ids, c.json.choices[0].token_ids);
  assert.deepEqual(r.json.token_logprobs, c.json.choices[0].logprobs.content.map((e: any) => e.logprob));
  assert.match(r.json.id, /^resp_[0-9a-f]{32}$/);
  assert.equal(r.json.object, 'response');
  assert.equal(r.json.status, 'completed');
  const [message, call] = r.json.output;
  assert.deepEqual(message.content, [{ type: 'output_text', text: 'Let me add.', annotations: [] }], 'the text without the tool-call markup');
  assert.equal(call.type, 'function_call');
  assert.equal(call.name, 'add');
  assert.deepEqual(JSON.parse(call.arguments), { a: 2, b: 3 });
  assert.match(call.call_id, /^call_/);
  assert.deepEqual(r.json.usage.input_tokens, r.json.prompt_token_ids.length);
  assert.deepEqual(r.json.usage.output_tokens, r.json.token_ids.length);
  const again = await responses({ model: 'm', instructions: 'Use add.', input: 'What is 2+3?', tools: [ADD] });
  assert.equal(again.json.output[1].call_id, call.call_id, 'tool-call ids follow the sample, so a rerun sends back the same conversation');
});

test('items: messages with parts, a function call joined to its assistant turn, its output as a tool message', async () => {
  const input = [
    { role: 'developer', content: 'Use add.' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is ' }, { type: 'input_text', text: '2+3?' }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me add.', annotations: [] }] },
    { type: 'function_call', call_id: 'call_1', name: 'add', arguments: '{"a": 2, "b": 3}' },
    { type: 'function_call_output', call_id: 'call_1', output: '5' },
  ];
  const r = await responses({ input, tools: [ADD] });
  assert.equal(r.status, 200, r.text);
  const messages = [
    { role: 'system', content: 'Use add.' },
    { role: 'user', content: 'What is 2+3?' },
    { role: 'assistant', content: 'Let me add.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } }] },
    { role: 'tool', content: '5', tool_call_id: 'call_1' },
  ];
  assert.deepEqual(r.json.prompt_token_ids, (await chat({ messages, tools: [ADD_CHAT] })).json.prompt_token_ids);
  assert.deepEqual(r.json.output.map((o: any) => o.type), ['message']);
  assert.equal(r.json.output[0].content[0].text, 'The sum is 5.');
});

test('max_output_tokens cuts the answer: status incomplete, as OpenAI answers', async () => {
  const r = await responses({ input: 'What is 2+3?', max_output_tokens: 3 });
  assert.equal(r.json.status, 'incomplete');
  assert.deepEqual(r.json.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(r.json.token_ids.length, 3);
  assert.equal(r.json.output[0].status, 'incomplete');
});

test('stream: the Responses events, numbered, ending in response.completed with the whole response', async () => {
  const body = { input: 'What is 2+3?', tools: [ADD] };
  const plain = await responses(body);
  const r = await responses({ ...body, stream: true });
  assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = namedEvents(r.text);
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  assert.deepEqual(events.map((e) => e.type), [
    'response.created', 'response.in_progress',
    'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
    'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
    'response.completed',
  ]);
  const done = events.at(-1).response;
  assert.deepEqual(done.token_ids, plain.json.token_ids);
  assert.deepEqual(done.output.map((o: any) => o.type), ['message', 'function_call']);
  assert.equal(events[0].response.status, 'in_progress');
  assert.equal(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join(''), 'Let me add.');
});

test('previous_response_id: the conversation continues, from memory and from the store (restarted proxy, another attempt)', async () => {
  const s = await scoped();
  const first = await responses({ instructions: 'Use add.', input: 'What is 2+3?', tools: [ADD] }, s.base);
  const call = first.json.output[1];
  const next = { previous_response_id: first.json.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '5' }], tools: [ADD] };
  // What OpenAI documents: the earlier input and output, without the earlier instructions, then the new input.
  const expected = (await chat({
    messages: [
      { role: 'user', content: 'What is 2+3?' },
      { role: 'assistant', content: 'Let me add.', tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'add', arguments: call.arguments } }] },
      { role: 'tool', content: '5', tool_call_id: call.call_id },
    ],
    tools: [ADD_CHAT],
  })).json.prompt_token_ids;
  const fromMemory = await responses(next, s.base);
  assert.deepEqual(fromMemory.json.prompt_token_ids, expected);
  assert.equal(fromMemory.json.output[0].content[0].text, 'The sum is 5.');
  const spans = (await store.querySpans(s.rid)).items;
  assert.equal(spans.length, 2);
  assert.equal(spans[0]!.trace_id, first.json.id.slice('resp_'.length), 'the span is found by the response id');
  assert.equal(spans[0]!.attributes['agl.api'], 'responses');

  // Another proxy (say, restarted) on the same store, and a second attempt of the rollout.
  const other = await startProxy({ port: 0, log: () => {}, factory: h.factory, sink: new StoreSpanSink(h.store!.url), initialPolicy: QWEN });
  try {
    const unscoped = await responses(next, other.url);
    assert.equal(unscoped.status, 400, 'a plain-URL call has no rollout to look in, and this proxy never saw the response');
    assert.equal(unscoped.json.error.code, 'previous_response_not_found');
    const retry = await store.startAttempt(s.rid);
    const base = `${other.url}/rollout/${s.rid}/attempt/${retry.attempt.attempt_id}`;
    const fromStore = await responses(next, base);
    assert.equal(fromStore.status, 200, fromStore.text);
    assert.deepEqual(fromStore.json.prompt_token_ids, expected, 'the same conversation');
  } finally {
    await other.close();
  }
});

test('store: false is not kept, so it cannot be continued; an unknown id is a 400', async () => {
  const s = await scoped();
  const r = await responses({ input: 'hi', store: false }, s.base);
  assert.equal(r.json.store, false);
  const next = await responses({ previous_response_id: r.json.id, input: 'and?' }, s.base);
  assert.equal(next.status, 400);
  assert.deepEqual(next.json.error, { message: `Previous response with id '${r.json.id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' });
  assert.equal((await store.querySpans(s.rid)).items.length, 1, 'the call is still recorded for training; the refused one never reached sampling');
});

test('a client retry of an answered call gets the recorded response back', async () => {
  const s = await scoped();
  const body = { input: 'What is 2+3?', tools: [ADD] };
  const first = await responses(body, s.base);
  const retried = await responses(body, s.base, { 'x-stainless-retry-count': '1' });
  assert.equal(retried.json.id, first.json.id);
  assert.deepEqual(retried.json.output, first.json.output);
});

const BAD: [string, unknown, RegExp, string | null][] = [
  ['no input', { model: 'm' }, /input is required/, 'input'],
  ['an image part that is no data: URL', { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] }, /expected a data: URL/, 'input[0].content[0].image_url'],
  ['a file part', { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, /only text parts \(input_text, output_text\) and input_image/, 'input[0].content'],
  ['a reasoning item followed by no output', { input: [{ type: 'reasoning', id: 'rs_1', summary: [] }] }, /must be followed by the assistant message or function call/, 'input[0]'],
  ['encrypted reasoning', { input: [{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA' }, { role: 'assistant', content: 'x' }, { role: 'user', content: 'y' }] }, /encrypted reasoning cannot be rendered/, 'input[0].encrypted_content'],
  ['an item reference', { input: [{ type: 'item_reference', id: 'msg_1' }] }, /cannot be rendered/, 'input[0]'],
  ['a hosted tool', { input: 'hi', tools: [{ type: 'web_search' }] }, /only function tools/, 'tools[0]'],
  ['tool_choice required', { input: 'hi', tools: [ADD], tool_choice: 'required' }, /cannot be enforced/, 'tool_choice'],
  ['structured output', { input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema: {} } } }, /structured output cannot be enforced/, 'text'],
  ['background', { input: 'hi', background: true }, /background/, 'background'],
  ['an unknown parameter', { input: 'hi', frequency_penalty: 1 }, /not a Responses parameter/, 'frequency_penalty'],
  ['arguments not JSON', { input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{x' }] }, /not valid JSON/, 'input[0]'],
  ['temperature 3', { input: 'hi', temperature: 3 }, /temperature must be at least 0 and at most 2/, 'temperature'],
];
for (const [name, body, message, param] of BAD) {
  test(`400 in OpenAI's error format: ${name}`, () => assertOpenAiBadRequest(`${h.proxy.url}/v1/responses`, body, message, param));
}
