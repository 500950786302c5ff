// parse_response of every renderer: stop handling, stripping, qwen3 tool calls (Dec-2025 "args" format).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer } from '../../chat';

const qwen = getTokenizer('Qwen/Qwen3-4B-Instruct-2507');
const llama = getTokenizer('meta-llama/Llama-3.1-8B-Instruct');
const bytes = getTokenizer('local/tiny-hello');

test('role_colon: text before "\\n\\nUser:" stripped; no stop string is not ok', () => {
  const r = getRenderer('role_colon', bytes);
  assert.deepEqual(r.parseResponse(bytes.encode(' 4\n\nUser:')), { message: { role: 'assistant', content: '4' }, ok: true });
  assert.deepEqual(r.parseResponse(bytes.encode(' four and')), { message: { role: 'assistant', content: 'four and' }, ok: false });
  assert.equal(r.parseResponse(bytes.encode(' a\n\nUser: b\n\nUser:')).ok, false);
});

test('llama3: split at the single <|eot_id|>', () => {
  const r = getRenderer('llama3', llama);
  const ok = r.parseResponse([...llama.encode('Hello there.'), 128009]);
  assert.deepEqual(ok, { message: { role: 'assistant', content: 'Hello there.' }, ok: true });
  assert.deepEqual(r.parseResponse(llama.encode('cut off')), { message: { role: 'assistant', content: 'cut off' }, ok: false });
});

test('qwen3_instruct: plain answer and one tool call with "args"', () => {
  const r = getRenderer('qwen3_instruct', qwen);
  assert.deepEqual(r.parseResponse([...qwen.encode('It is 4.'), 151645]), { message: { role: 'assistant', content: 'It is 4.' }, ok: true });
  const text = 'Let me check.<tool_call>\n{"name": "get_weather", "args": {"city": "Z\\u00fcrich"}, "id": "c7"}\n</tool_call>';
  const ids = [...qwen.encode(text), 151645];
  assert.ok(ids.includes(151657) && ids.includes(151658), '<tool_call> tags are single tokens');
  const parsed = r.parseResponse(ids);
  assert.equal(parsed.ok, true);
  assert.equal(parsed.message.content, text);
  assert.deepEqual(parsed.message.tool_calls, [{ type: 'function', id: 'c7', function: { name: 'get_weather', arguments: '{"city": "Z\\u00fcrich"}' } }]);
});

test('qwen3: a broken tool call or a missing stop token is not ok', () => {
  const r = getRenderer('qwen3', qwen);
  assert.equal(r.parseResponse([...qwen.encode('<tool_call>\n{"name": 3}\n</tool_call>'), 151645]).ok, false);
  assert.equal(r.parseResponse([...qwen.encode('<tool_call>\nnot json\n</tool_call>'), 151645]).ok, false);
  assert.equal(r.parseResponse(qwen.encode('thinking forever')).ok, false);
  const thought = r.parseResponse([...qwen.encode('Add.\n</think>\n\nIt is 4.'), 151645]);
  assert.deepEqual(thought, { message: { role: 'assistant', content: 'Add.\n</think>\n\nIt is 4.' }, ok: true });
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
