// role_colon is tinker-cookbook 0.6.1's role_colon, also where tools are involved: the cookbook (its venv,
// test/helpers/cookbook-venv.ts) renders conversations whose assistant turns carry tool_calls (it renders the
// content alone), refuses every tools list, and leaves a <tool_call> the model writes in the text; ours must give the
// same tokens, weights, refusals and parses. role_colon_tools keeps this project's tool format under its own name
// (declarations, calls rendered and parsed back), and the proxy refuses tools on role_colon saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { getRenderer, type Message, type ModelInput } from '../../chat';
import { tokenizerFromFiles } from '../../chat/tokenizers';
import { withToolDeclarations } from '../../chat/tools';
import { buildPrompt } from '../../proxy/prompt';
import type { InternalCall } from '../../proxy/call-types';
import { cookbookVenv } from '../helpers/cookbook-venv';
import { tokenizerSpecFor } from './parity/tokenizer-specs';

const run = promisify(execFile);
type Err = { error: string };
const isErr = (v: unknown): v is Err => typeof v === 'object' && v !== null && 'error' in v;
const flat = (m: ModelInput) => m.chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : []));
const attempt = <T>(f: () => T): T | Err => {
  try {
    return f();
  } catch (e) {
    return { error: (e as Error).message };
  }
};

const WEATHER = { name: 'get_weather', description: 'Weather for a city (°C).', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const ADD = { name: 'add', description: 'Add two numbers.', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } };
const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

/** Conversations with tool calls and results, in several shapes (seeded variations of each). */
function conversations(): Message[][] {
  const out: Message[][] = [];
  const texts = ['', 'Let me check.', 'Calling a tool.\n', '日本 ☕'];
  const results = ['{"temp_c": 21}', '5', '', 'no results'];
  for (let i = 0; i < 16; i++) {
    const text = texts[i % 4]!;
    const calls = i % 3 === 0 ? [call('c1', 'get_weather', '{"city": "Zürich"}'), call('c2', 'add', '{"a": 2, "b": 3}')] : [call(`c${i}`, i % 2 ? 'add' : 'get_weather', i % 2 ? '{"a": 1}' : '{"city": "Oslo"}')];
    const conv: Message[] = [
      ...(i % 2 ? [{ role: 'system', content: 'Use the tools.' } as Message] : []),
      { role: 'user', content: `Question ${i}?` },
      { role: 'assistant', content: text, tool_calls: calls },
      ...calls.map((c, j): Message => ({ role: 'tool', content: results[(i + j) % 4]!, tool_call_id: c.id, name: c.function.name })),
    ];
    if (i % 4 !== 3) conv.push({ role: 'assistant', content: i % 2 ? 'It is 21°C.' : '5', ...(i % 5 === 0 ? { tool_calls: [call('z', 'add', '{}')] } : {}) });
    out.push(conv);
  }
  return out;
}

const TOOL_LISTS = [[WEATHER], [WEATHER, ADD]];
const PARSES = [
  ' <tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>\n\nUser:',
  ' Sure.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>\n\nUser:',
  ' <tool_call>not json</tool_call>',
  ' plain\n\nUser:',
];

test('role_colon renders, refuses and parses tools and tool calls as tinker-cookbook 0.6.1 does', { timeout: 15 * 60_000 }, async () => {
  const spec = tokenizerSpecFor('role_colon')!;
  assert.ok(spec, 'a tokenizer for role_colon');
  const venv = await cookbookVenv();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'role-colon-parity-'));
  const convs = conversations();
  writeFileSync(path.join(dir, 'in.json'), JSON.stringify({ tokenizer: spec.py, conversations: convs, tools: TOOL_LISTS, parses: PARSES }));
  await run(venv.python, [path.join(__dirname, 'role_colon_reference.py'), path.join(dir, 'in.json'), path.join(dir, 'out.json')], { maxBuffer: 64 << 20, timeout: 10 * 60_000 });
  const want = JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8')) as {
    cases: { prompt: number[] | Err; last: unknown; all: unknown }[];
    prefixes: unknown[];
    parses: { message: Record<string, unknown>; termination: string }[];
  };
  const tok = tokenizerFromFiles(spec.files, spec.py.name);
  const ours = getRenderer('role_colon', tok);
  const diffs: string[] = [];
  const same = (what: string, a: unknown, b: unknown) => {
    if (isErr(a) && isErr(b)) return;
    try {
      assert.deepEqual(a, b);
    } catch {
      diffs.push(`${what}: cookbook ${JSON.stringify(b).slice(0, 300)}\n    ours ${JSON.stringify(a).slice(0, 300)}`);
    }
  };
  const supervised = (msgs: Message[], tow: 'last_assistant_message' | 'all_assistant_messages') =>
    attempt(() => {
      const ex = ours.buildSupervisedExample(msgs, tow);
      return { tokens: flat(ex.modelInput), weights: ex.weights };
    });
  convs.forEach((conv, i) => {
    const promptMsgs = conv[conv.length - 1]!.role === 'assistant' ? conv.slice(0, -1) : conv;
    same(`case ${i} generation prompt`, attempt(() => flat(ours.buildGenerationPrompt(promptMsgs))), want.cases[i]!.prompt);
    same(`case ${i} supervised last_assistant_message`, supervised(conv, 'last_assistant_message'), want.cases[i]!.last);
    same(`case ${i} supervised all_assistant_messages`, supervised(conv, 'all_assistant_messages'), want.cases[i]!.all);
  });
  TOOL_LISTS.forEach((tools, i) => {
    assert.ok(isErr(want.prefixes[i]), 'the cookbook refuses a tools list');
    const got = attempt(() => withToolDeclarations(ours, [{ role: 'user', content: 'hi' }], tools));
    if (!isErr(got)) diffs.push(`tools list ${i}: the cookbook refuses it (${(want.prefixes[i] as Err).error}); ours declares it: ${JSON.stringify(got).slice(0, 200)}`);
  });
  PARSES.forEach((text, i) => {
    const r = ours.parseResponse(tok.encode(text));
    const got: Record<string, unknown> = { role: r.message.role, content: r.message.content };
    if (r.message.tool_calls) got.tool_calls = r.message.tool_calls;
    if (r.message.unparsed_tool_calls) got.unparsed_tool_calls = r.message.unparsed_tool_calls;
    same(`parse ${JSON.stringify(text)}`, { message: got, termination: r.termination }, want.parses[i]);
  });
  assert.deepEqual(diffs, [], `role_colon differs from the cookbook's:\n${diffs.join('\n')}`);
});

test('role_colon_tools keeps the tool format: tools declared, calls rendered and parsed back', () => {
  const spec = tokenizerSpecFor('role_colon')!;
  const tok = tokenizerFromFiles(spec.files, spec.py.name);
  const r = getRenderer('role_colon_tools', tok);
  const msgs = withToolDeclarations(r, [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: '', tool_calls: [call('c1', 'get_weather', '{"city": "Oslo"}')] }], [WEATHER]);
  const text = tok.decode(flat(r.buildSupervisedExample(msgs).modelInput));
  assert.match(text, /System: Tools \(call one as <tool_call>.*\n\{"name": "get_weather", "description": "Weather for a city \(°C\)\."/);
  assert.match(text, /Assistant: <tool_call>\{"name": "get_weather", "arguments": \{"city": "Oslo"\}\}<\/tool_call>\n\n/);
  const parsed = r.parseResponse(tok.encode(PARSES[1]!));
  assert.equal(parsed.message.content, 'Sure.');
  assert.deepEqual(parsed.message.tool_calls?.map((c) => [c.function.name, JSON.parse(c.function.arguments)]), [['get_weather', { city: 'Oslo' }]]);
});

test('the proxy refuses tools on role_colon in one line naming role_colon_tools; role_colon_tools renders them', () => {
  const spec = tokenizerSpecFor('role_colon')!;
  const tok = tokenizerFromFiles(spec.files, spec.py.name);
  const c = { messages: [{ role: 'user', content: 'Weather?' }], tools: [{ type: 'function', function: WEATHER }] } as unknown as InternalCall;
  assert.throws(() => buildPrompt(c, getRenderer('role_colon', tok)), /renderer role_colon cannot show tools or tool calls to the model .*rendererName role_colon_tools/);
  const p = buildPrompt(c, getRenderer('role_colon_tools', tok));
  assert.match(tok.decode(p.tokens), /Tools \(call one as <tool_call>/);
});
