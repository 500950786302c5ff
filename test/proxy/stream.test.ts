// stream: true answered as SSE; the last chunk carries token ids, logprobs and prompt_token_ids.
// Also a qwen3_instruct policy end to end: tool calls parsed from the sampled tokens.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { policy, post, startHarness } from './helpers';
import type { Harness } from './helpers';

let h: Harness;
before(async () => {
  h = await startHarness({
    script: (_p, _params, i) =>
      i === 0 ? 'Checking.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Z\\u00fcrich"}}\n</tool_call>' : 'Sunny ☀ in Zürich, ' + 'very '.repeat(20) + 'nice.',
    initial: policy({ switchId: 'q', modelName: 'Qwen/Qwen3-4B-Instruct-2507', baseModel: 'Qwen/Qwen3-4B-Instruct-2507', renderer: 'qwen3_instruct' }),
  });
});
after(() => h.close());

const BODY = { model: 'Qwen/Qwen3-4B-Instruct-2507', messages: [{ role: 'system', content: 'Use tools.' }, { role: 'user', content: 'Weather?' }], n: 2 };

function events(text: string): any[] {
  const lines = text.split('\n\n').filter((l) => l.trim());
  assert.equal(lines.at(-1), 'data: [DONE]');
  return lines.slice(0, -1).map((l) => {
    assert.ok(l.startsWith('data: '), l);
    return JSON.parse(l.slice(6));
  });
}

test('qwen3_instruct: tool calls parsed, finish_reason tool_calls, im_end in token ids', async () => {
  const r = await post(`${h.proxy.url}/v1/chat/completions`, BODY);
  assert.equal(r.status, 200, r.text);
  const [c0, c1] = r.json.choices;
  assert.equal(c0.finish_reason, 'tool_calls');
  assert.equal(c0.message.tool_calls.length, 1);
  assert.equal(c0.message.tool_calls[0].function.name, 'get_weather');
  assert.deepEqual(JSON.parse(c0.message.tool_calls[0].function.arguments), { city: 'Zürich' });
  assert.match(c0.message.tool_calls[0].id, /^tinker-tool-call-/);
  assert.equal(c0.token_ids.at(-1), 151645);
  assert.equal(c1.finish_reason, 'stop');
  assert.ok(c1.message.content.startsWith('Sunny ☀ in Zürich'));
  assert.equal(r.json.prompt_token_ids[0], 151644);
});

test('stream: role, content and tool-call deltas, then one last chunk with ids and logprobs', async () => {
  const plain = await post(`${h.proxy.url}/v1/chat/completions`, BODY);
  const r = await post(`${h.proxy.url}/v1/chat/completions`, { ...BODY, stream: true, stream_options: { include_usage: true } });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.equal(r.headers.get('x-agl-policy'), 'q');
  const ev = events(r.text);
  assert.ok(ev.every((e) => e.object === 'chat.completion.chunk' && e.id === ev[0].id));
  const content = [0, 1].map((i) =>
    ev.flatMap((e) => e.choices.filter((c: any) => c.index === i && c.delta.content).map((c: any) => c.delta.content)).join(''),
  );
  assert.deepEqual(content, plain.json.choices.map((c: any) => c.message.content));
  assert.ok(ev.filter((e) => e.choices.some((c: any) => c.index === 1 && c.delta.content)).length > 1, 'long content comes in several deltas');
  const toolDelta = ev.flatMap((e) => e.choices.filter((c: any) => c.delta.tool_calls)).map((c: any) => c.delta.tool_calls[0]);
  assert.equal(toolDelta.length, 1);
  assert.equal(toolDelta[0].function.name, 'get_weather');
  const last = ev.at(-1);
  assert.deepEqual(last.prompt_token_ids, plain.json.prompt_token_ids);
  assert.deepEqual(last.choices.map((c: any) => c.token_ids), plain.json.choices.map((c: any) => c.token_ids));
  assert.deepEqual(last.choices.map((c: any) => c.logprobs.content.length), plain.json.choices.map((c: any) => c.token_ids.length));
  assert.deepEqual(last.choices.map((c: any) => c.finish_reason), ['tool_calls', 'stop']);
  assert.equal(last.usage.total_tokens, plain.json.usage.total_tokens);
  assert.ok(ev.slice(0, -1).every((e) => e.choices.every((c: any) => c.finish_reason === null)));
});

test('tools are declared in the qwen3 system prompt (HF template format); tool_choice "none" leaves them out', async () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const { getTokenizer } = await import('../../chat');
  const tok = getTokenizer('Qwen/Qwen3-4B-Instruct-2507');
  const withTools = await post(`${h.proxy.url}/v1/chat/completions`, { ...BODY, n: 1, tools });
  assert.equal(withTools.status, 200, withTools.text);
  const prompt = tok.decode(withTools.json.prompt_token_ids);
  assert.ok(prompt.startsWith('<|im_start|>system\nUse tools.\n\n# Tools\n'), prompt.slice(0, 80));
  assert.ok(prompt.includes('<tools>\n{"type": "function", "function": {"name": "get_weather"'));
  const none = await post(`${h.proxy.url}/v1/chat/completions`, { ...BODY, n: 1, tools, tool_choice: 'none' });
  assert.ok(!tok.decode(none.json.prompt_token_ids).includes('<tools>'));
  const bad = await post(`${h.proxy.url}/v1/chat/completions`, { ...BODY, tools: [{ type: 'function' }] });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, 'tools[0]');
});
