// Tools through the renderers, for every API: role_colon_tools shows them in its short markup and parses the calls a
// model writes in it (conversations without tools render as role_colon's), qwen3 as its template does; a renderer
// with no way to show tools (llama3, and role_colon as in the cookbook) refuses them with a 400 in the called API's
// own error format.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer, toInts } from '../../chat';
import { withToolDeclarations } from '../../chat/tools';
import { ROLE_COLON_TOOLS_HEADER } from '../../chat/renderers/role-colon';
import { policy, post, startHarness, type Harness } from './helpers';

const bytes = getTokenizer('local/tiny-hello');
const roleColon = getRenderer('role_colon_tools', bytes);
const TOOL = { type: 'function', function: { name: 'add', parameters: { type: 'object' } } };

let h: Harness;
before(async () => {
  h = await startHarness({ initial: policy({ renderer: 'role_colon_tools' }), script: (prompt) => (bytes.decode(prompt).includes('Tool: 5') ? 'It is 5.' : 'Adding. <tool_call>{"name": "add", "arguments": {"a": 2}}</tool_call>') });
});
after(() => h.close());

test('role_colon_tools: without tools exactly the cookbook rendering; with tools declared in the system turn and calls after the text', () => {
  const plain = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }];
  assert.equal(bytes.decode(toInts(roleColon.buildGenerationPrompt(plain))), '<|bos|>System: Be brief.\n\nUser: Hi\n\nAssistant:');
  const withTools = withToolDeclarations(
    roleColon,
    [...plain, { role: 'assistant', content: 'Adding.', tool_calls: [{ type: 'function', id: 'c1', function: { name: 'add', arguments: '{"a":2}' } }] }, { role: 'tool', content: '5', tool_call_id: 'c1' }],
    [TOOL],
  );
  assert.equal(
    bytes.decode(toInts(roleColon.buildGenerationPrompt(withTools))),
    `<|bos|>System: Be brief.\n\n${ROLE_COLON_TOOLS_HEADER}\n{"name": "add", "description": "", "parameters": {"type": "object"}}\n\nUser: Hi\n\n` +
      'Assistant: Adding.\n<tool_call>{"name": "add", "arguments": {"a": 2}}</tool_call>\n\nTool: 5\n\nAssistant:',
  );
  const parsed = roleColon.parseResponse(bytes.encode(' Adding. <tool_call>{"name": "add", "arguments": {"a": 2}}</tool_call>\n\nUser:'));
  assert.equal(parsed.termination, 'stop_sequence');
  assert.deepEqual(parsed.message.tool_calls, [{ type: 'function', function: { name: 'add', arguments: '{"a": 2}' } }]);
  const broken = roleColon.parseResponse(bytes.encode(' <tool_call>{"name": 3}</tool_call>\n\nUser:'));
  assert.deepEqual(broken.message.unparsed_tool_calls, [{ raw_text: '<tool_call>{"name": 3}</tool_call>', error: "Missing or invalid 'name' field" }], 'a broken call is kept as unparsed');
});

test('role_colon_tools through the APIs: the call is parsed from the sample, with ids that follow the sample', async () => {
  const c = await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: '2+3?' }], tools: [TOOL] });
  assert.equal(c.json.choices[0].finish_reason, 'tool_calls');
  assert.match(bytes.decode(c.json.prompt_token_ids), /Tools \(call one as/);
  const again = await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: '2+3?' }], tools: [TOOL] });
  assert.equal(again.json.choices[0].message.tool_calls[0].id, c.json.choices[0].message.tool_calls[0].id);
  assert.match(again.json.choices[0].message.tool_calls[0].id, /^tinker-tool-call-[0-9a-f]{24}$/);
  const m = await post(`${h.proxy.url}/v1/messages`, { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: '2+3?' }], tools: [{ name: 'add', input_schema: { type: 'object' } }] });
  assert.deepEqual(m.json.content.map((b: any) => b.type), ['text', 'tool_use']);
  const r = await post(`${h.proxy.url}/v1/responses`, {
    input: [{ role: 'user', content: '2+3?' }, { type: 'function_call', call_id: 'c', name: 'add', arguments: '{"a": 2}' }, { type: 'function_call_output', call_id: 'c', output: '5' }],
    tools: [{ type: 'function', name: 'add', parameters: { type: 'object' } }],
  });
  assert.equal(r.json.output[0].content[0].text, 'It is 5.');
});

test('llama3 cannot show tools: a 400 in each API’s own format; tool choices nothing can enforce are refused too', async () => {
  const llama = await startHarness({
    initial: policy({ switchId: 'l', modelName: 'meta-llama/Llama-3.1-8B-Instruct', baseModel: 'meta-llama/Llama-3.1-8B-Instruct', renderer: 'llama3' }),
  });
  try {
    const chat = await post(`${llama.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hi' }], tools: [TOOL] });
    assert.equal(chat.status, 400);
    assert.equal(chat.json.error.code, 'tools_not_supported');
    assert.match(chat.json.error.message, /renderer llama3 cannot show tools/);
    const history = await post(`${llama.proxy.url}/v1/responses`, { input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }] });
    assert.equal(history.json.error.code, 'tools_not_supported', 'a past tool call cannot be shown either');
    const msg = await post(`${llama.proxy.url}/v1/messages`, { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'f', input_schema: { type: 'object' } }] });
    assert.equal(msg.status, 400);
    assert.deepEqual(Object.keys(msg.json), ['type', 'error']);
    assert.match(msg.json.error.message, /cannot show tools/);
    const plain = await post(`${llama.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(plain.status, 200, 'without tools it serves as before');
  } finally {
    await llama.close();
  }
  const required = await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hi' }], tools: [TOOL], tool_choice: 'required' });
  assert.equal(required.status, 400);
  assert.match(required.json.error.message, /cannot be enforced/);
});
