// OpenAI tool definitions render as tinker-cookbook 0.6.1's OpenAI layer renders them, for every
// registry renderer: the layer (openai_compat.openai_tools_to_tinker) rebuilds each tool as {name, description: ""
// when missing, parameters: {} when missing} in that key order, and the qwen3-style renderers declare that JSON.
// Tools without a description, with description after parameters, with "function" before "type", without
// parameters, with `strict`; alone and all together; in three OpenAI chat requests (system + user, user only, a
// tool call and its result). Ours: the request through the proxy (parseChatRequest, buildPrompt) and through
// chat/tools.ts's withToolDeclarations (what `client render` uses); the cookbook's: openai_tools_reference.py in the
// cookbook venv, on the same tokenizer files as test/chat/parity.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { getRenderer, RENDERER_NAMES, toInts, type Renderer, type Tokenizer, type ToolSpec } from '../../chat';
import { withToolDeclarations } from '../../chat/tools';
import { tokenizerFromFiles } from '../../chat/tokenizers';
import { O200kChatTokenizer } from '../../chat/o200k-chat-tokenizer';
import { parseChatRequest } from '../../proxy/request';
import { buildPrompt } from '../../proxy/prompt';
import type { InternalCall } from '../../proxy/call-types';
import { cookbookVenv } from '../helpers/cookbook-venv';
import { LIBTORCH_LIBS, libtorchCpuDir } from '../helpers/libtorch-cpu';
import { tokenizerSpecFor } from './parity/tokenizer-specs';

const run = promisify(execFile);

/**
 * Renderers whose tool format is this project's own (not cookbook names): role_colon_tools declares tools where the
 * cookbook's role_colon refuses them (test/chat/role-colon-parity.test.ts checks both). Left out here.
 */
const TOOLS_EXTENSION = new Set(['role_colon_tools']);

const CITY = { type: 'object', properties: { city: { type: 'string', description: 'City name' }, days: { type: 'integer' } }, required: ['city'] };
const AB = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };

/** OpenAI tool definitions as clients write them, in other key orders and with fields left out. */
const TOOLS: Record<string, Record<string, unknown>> = {
  'no description': { type: 'function', function: { name: 'get_weather', parameters: CITY } },
  'description after parameters': { type: 'function', function: { name: 'add', parameters: AB, description: 'Add two numbers.' } },
  'function before type, parameters first': { function: { parameters: { type: 'object', properties: { q: { type: 'string' } } }, description: 'Search the web for 日本.', name: 'search' }, type: 'function' },
  'no parameters, no description': { type: 'function', function: { name: 'now' } },
  'description before name, no parameters': { type: 'function', function: { description: 'The time of day.', name: 'clock' } },
  'strict, in the cookbook order': { type: 'function', function: { name: 'lookup', description: 'Look up a word.', parameters: { type: 'object', properties: { word: { type: 'string' } } }, strict: true } },
  'the cookbook order': { type: 'function', function: { name: 'get_weather', description: 'Weather for a city (°C).', parameters: CITY } },
};
const TOOL_LISTS: [string, Record<string, unknown>[]][] = [...Object.entries(TOOLS).map(([k, t]): [string, Record<string, unknown>[]] => [k, [t]]), ['all of them', Object.values(TOOLS)]];

const CONVERSATIONS: [string, Record<string, unknown>[]][] = [
  ['system + user', [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'Weather in Zürich?' }]],
  ['user only', [{ role: 'user', content: 'Add 2 and 3.' }]],
  [
    'a tool call and its result',
    [
      { role: 'system', content: 'Use the tools.' },
      { role: 'user', content: 'Weather in Zürich?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Zürich"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'get_weather', content: '21°C, sunny' },
      { role: 'user', content: 'And tomorrow?' },
    ],
  ],
];

const CASES = CONVERSATIONS.flatMap(([conv, messages]) => TOOL_LISTS.map(([tools, list]) => ({ label: `${conv}, tools: ${tools}`, messages, tools: list })));

interface Job {
  renderer: string;
  tokenizer: Record<string, unknown>;
  ours: () => Tokenizer;
}

type Err = { error: string };
const isErr = (v: unknown): v is Err => typeof v === 'object' && v !== null && !Array.isArray(v) && 'error' in v;

function attempt(f: () => number[]): number[] | Err {
  try {
    return f();
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** The proxy's way: an OpenAI chat request parsed and rendered as /v1/chat/completions renders it. */
function viaProxy(renderer: Renderer, body: { messages: unknown; tools: unknown }): number[] {
  const req = parseChatRequest(body);
  const call: InternalCall = { api: 'chat', id: 'chatcmpl-test', model: null, messages: req.messages, tools: req.tools, prompt: null, n: 1, stream: false, stop: [], sampling: {}, toolCallIdPrefix: 'call_' };
  return buildPrompt(call, renderer).tokens;
}

/** chat/tools.ts directly (client render): the proxy's parsed messages, the tools as sent. */
function viaChat(renderer: Renderer, body: { messages: unknown; tools: unknown }): number[] {
  const req = parseChatRequest({ messages: body.messages });
  return toInts(renderer.buildGenerationPrompt(withToolDeclarations(renderer, req.messages, body.tools as ToolSpec[])));
}

test(`OpenAI tool definitions render as tinker-cookbook's OpenAI layer renders them, every renderer (${CASES.length} requests each)`, { timeout: 20 * 60_000 }, async (t) => {
  const venv = await cookbookVenv();
  const jobs: Job[] = [];
  const unchecked: string[] = [];
  for (const name of RENDERER_NAMES) {
    if (name === 'tml_v0' || TOOLS_EXTENSION.has(name)) continue;
    const spec = tokenizerSpecFor(name);
    if (!spec) unchecked.push(name);
    else jobs.push({ renderer: name, tokenizer: spec.py as unknown as Record<string, unknown>, ours: () => tokenizerFromFiles(spec.files, spec.py.name) });
  }
  const libs = await libtorchCpuDir(venv.python);
  jobs.push({ renderer: 'tml_v0', tokenizer: { kind: 'tml', name: 'thinkingmachines/Inkling', libs: LIBTORCH_LIBS.map((l) => path.join(libs, l)) }, ours: () => new O200kChatTokenizer('thinkingmachines/Inkling') });
  assert.deepEqual(unchecked, [], 'renderers with no tokenizer to check them with');

  const dir = mkdtempSync(path.join(os.tmpdir(), 'openai-tools-'));
  const input = path.join(dir, 'in.json');
  const output = path.join(dir, 'out.json');
  writeFileSync(input, JSON.stringify({ jobs: jobs.map((j) => ({ renderer: j.renderer, tokenizer: j.tokenizer })), cases: CASES.map((c) => ({ messages: c.messages, tools: c.tools })) }));
  await run(venv.python, [path.join(__dirname, 'openai_tools_reference.py'), input, output], { maxBuffer: 64 << 20, timeout: 15 * 60_000 });
  const results = JSON.parse(readFileSync(output, 'utf8')) as { renderer: string; fatal?: string; prompts: (number[] | Err)[] }[];

  const tokenizers = new Map<string, Tokenizer>();
  const report: string[] = [];
  let compared = 0;
  let declared = 0;
  let extension = 0;
  results.forEach((res, i) => {
    const job = jobs[i]!;
    if (res.fatal) {
      report.push(`${job.renderer}: the cookbook side failed:\n${res.fatal}`);
      return;
    }
    const key = JSON.stringify(job.tokenizer);
    if (!tokenizers.has(key)) tokenizers.set(key, job.ours());
    const renderer = getRenderer(job.renderer, tokenizers.get(key)!);
    const diffs: string[] = [];
    CASES.forEach((c, k) => {
      const want = res.prompts[k]!;
      if (!isErr(want)) declared++;
      for (const [way, f] of [['proxy', viaProxy], ['chat/tools', viaChat]] as const) {
        compared++;
        const got = attempt(() => f(renderer, { messages: c.messages, tools: c.tools }));
        if (isErr(want) && isErr(got)) continue;
        if (isErr(want) && TOOLS_EXTENSION.has(job.renderer)) {
          extension++;
          continue;
        }
        if (isErr(want) || isErr(got) || JSON.stringify(got) !== JSON.stringify(want)) {
          const show = (v: number[] | Err) => (isErr(v) ? `raised ${v.error.slice(0, 200)}` : JSON.stringify(renderer.tokenizer.decode(v)).slice(0, 900));
          diffs.push(`${c.label} (${way}):\n      cookbook ${show(want)}\n      ours     ${show(got)}`);
        }
      }
    });
    t.diagnostic(`${job.renderer}: ${CASES.length} requests, ${diffs.length ? `${diffs.length} differences` : 'identical'}`);
    if (diffs.length) report.push(`${job.renderer}: ${diffs.length} differences, first ones:\n    ${diffs.slice(0, 3).join('\n    ')}`);
  });
  t.diagnostic(`${jobs.length} renderers x ${CASES.length} requests x 2 ways = ${compared} prompts compared (the cookbook rendered ${declared} requests and refused ${jobs.length * CASES.length - declared}, of which ${extension / 2} only an extension renders)`);
  assert.equal(report.length, 0, report.join('\n\n'));
});
