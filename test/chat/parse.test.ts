// parse_response of every renderer as tinker-cookbook 0.6.1 has it: terminations (stop_sequence, eos, malformed),
// role_colon's prefix/suffix, qwen3 thinking parts and tool calls ({"name", "arguments"}), unparsed calls kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer } from '../../chat';

const qwen = getTokenizer('Qwen/Qwen3-4B-Instruct-2507');
const llama = getTokenizer('meta-llama/Llama-3.1-8B-Instruct');
const bytes = getTokenizer('local/tiny-hello');

test('role_colon: " " and "\\n\\n" taken off; EOS is a clean end; a missing or doubled stop string is malformed', () => {
  const r = getRenderer('role_colon', bytes);
  assert.deepEqual(r.parseResponse(bytes.encode(' 4\n\nUser:')), { message: { role: 'assistant', content: '4' }, termination: 'stop_sequence' });
  assert.deepEqual(r.parseResponse(bytes.encode(' four and')), { message: { role: 'assistant', content: 'four and' }, termination: 'malformed' });
  assert.deepEqual(r.parseResponse(bytes.encode(' four<|eos|>')), { message: { role: 'assistant', content: 'four' }, termination: 'eos' });
  assert.equal(r.parseResponse(bytes.encode(' a\n\nUser: b\n\nUser:')).termination, 'malformed');
  assert.equal(r.parseResponse(bytes.encode(' a\n\nUser:<|eos|>')).termination, 'malformed');
});

test('llama3: split at the single <|eot_id|>; two are a sampler bug and throw', () => {
  const r = getRenderer('llama3', llama);
  assert.deepEqual(r.parseResponse([...llama.encode('Hello there.'), 128009]), { message: { role: 'assistant', content: 'Hello there.' }, termination: 'stop_sequence' });
  assert.deepEqual(r.parseResponse(llama.encode('cut off')), { message: { role: 'assistant', content: 'cut off' }, termination: 'malformed' });
  assert.throws(() => r.parseResponse([1, 128009, 2, 128009]), /expected to split into 1 or 2 pieces/);
});

test('qwen3_instruct: plain answer as a string; a tool call with "arguments" goes to tool_calls, text parts stay', () => {
  const r = getRenderer('qwen3_instruct', qwen);
  assert.deepEqual(r.parseResponse([...qwen.encode('It is 4.'), 151645]), { message: { role: 'assistant', content: 'It is 4.' }, termination: 'stop_sequence' });
  const text = 'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Z\\u00fcrich", "n": 1.0}, "id": "c7"}\n</tool_call>';
  const ids = [...qwen.encode(text), 151645];
  assert.ok(ids.includes(151657) && ids.includes(151658), '<tool_call> tags are single tokens');
  const parsed = r.parseResponse(ids);
  assert.equal(parsed.termination, 'stop_sequence');
  assert.deepEqual(parsed.message.content, [{ type: 'text', text: 'Let me check.' }]);
  assert.deepEqual(parsed.message.tool_calls, [{ type: 'function', id: 'c7', function: { name: 'get_weather', arguments: '{"city": "Z\\u00fcrich", "n": 1.0}' } }]);
});

test('qwen3: thinking becomes a part without its frame; broken or unterminated calls are unparsed, not lost', () => {
  const r = getRenderer('qwen3', qwen);
  const thought = r.parseResponse([...qwen.encode('<think>\nAdd.\n</think>\n\nIt is 4.'), 151645]);
  assert.deepEqual(thought.message.content, [{ type: 'thinking', thinking: 'Add.' }, { type: 'text', text: 'It is 4.' }]);
  const bad = r.parseResponse([...qwen.encode('<tool_call>\n{"name": 3}\n</tool_call>'), 151645]);
  assert.deepEqual(bad.message.unparsed_tool_calls, [{ raw_text: '<tool_call>\n{"name": 3}\n</tool_call>', error: "Missing or invalid 'name' field" }]);
  const args = r.parseResponse([...qwen.encode('<tool_call>\n{"name": "f", "args": {}}\n</tool_call>'), 151645]);
  assert.equal(args.message.tool_calls, undefined, 'the Dec-2025 "args" key is no longer read');
  assert.equal(args.message.unparsed_tool_calls?.[0]?.error, "Missing or invalid 'arguments' field");
  const open = r.parseResponse([...qwen.encode('ok <tool_call>\n{"name": "f"'), 151645]);
  assert.match(open.message.unparsed_tool_calls?.[0]?.error ?? '', /^unterminated tool block/);
  assert.equal(r.parseResponse(qwen.encode('thinking forever')).termination, 'malformed');
});

test('decode is byte-exact, also for characters split across tokens', () => {
  for (const tok of [qwen, llama, bytes]) {
    const text = 'naïve café ☕ 😀👍🏽 日本語 \u0000 \r\n\t end';
    const ids = tok.encode(text);
    assert.equal(tok.decode(ids), text);
    const joined = Buffer.concat(ids.map((id) => Buffer.from(tok.tokenBytes(id))));
    assert.equal(joined.toString('utf8'), text);
  }
});
