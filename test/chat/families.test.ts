// gpt-oss, DeepSeek V3.1 and DeepSeek V4.1 against tinker-cookbook 0.6.1 itself: fixtures/families/expected.json
// holds what the cookbook's own renderers produced (make_family_fixtures.py, over the same tokenizer files) for
// every renderer name of these families: tool-declaration prefixes, generation prompts before every assistant
// turn, supervised tokens and weights for every TrainOnWhat, stop sequences, and parses of sampled responses
// (well formed, cut short, malformed tool calls). Inputs the cookbook refuses must be refused here too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { toInts } from '../../chat/model-input';
import { getTokenizer } from '../../chat/tokenizers';
import { deepseekV3Renderers } from '../../chat/renderers/deepseek-v3';
import { deepseekV4_1Renderers } from '../../chat/renderers/deepseek-v4-1';
import { GptOssRenderer, gptOssRenderers } from '../../chat/renderers/gpt-oss';
import { getRenderer } from '../../chat/renderers/registry';
import type { FunctionSpec, Message, Renderer, Tokenizer, TrainOnWhat } from '../../chat/types';

type Outcome<T> = { ok: T } | { error: string };

interface Case {
  id: string;
  prefix: Outcome<Message[]>;
  prompts?: ({ cut: number } & Outcome<number[]>)[];
  /** The example's tokens, the same for every TrainOnWhat the cookbook accepted (null if it refused all). */
  supervised_tokens?: number[] | null;
  supervised?: Record<string, Outcome<{ tokens?: number[]; weights: string }>>;
}

interface Expected {
  gpt_oss_date: string;
  conversations: { id: string; tools?: FunctionSpec[]; system_prompt?: string; messages: Message[] }[];
  renderers: Record<
    string,
    {
      family: 'gpt_oss' | 'deepseekv3' | 'deepseekv4_1';
      stop: number[];
      cases: Case[];
      parses: ({ tokens: number[] } & Outcome<{ message: Message; termination: string }>)[];
    }
  >;
}

const expected = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'families', 'expected.json'), 'utf8')) as Expected;

// The tokenizers the proxy uses for these models (getTokenizer), over the same files as the fixtures.
const tokenizers: Record<string, () => Tokenizer> = {
  gpt_oss: () => getTokenizer('openai/gpt-oss-20b'),
  deepseekv3: () => getTokenizer('deepseek-ai/DeepSeek-V3.1'),
  deepseekv4_1: () => getTokenizer('deepseek-ai/DeepSeek-V4.1-Flash'),
};
const tables = { ...gptOssRenderers, ...deepseekV3Renderers, ...deepseekV4_1Renderers };
const tokenizerCache = new Map<string, Tokenizer>();

function rendererFor(name: string): Renderer {
  const family = expected.renderers[name]!.family;
  let tok = tokenizerCache.get(family);
  if (!tok) tokenizerCache.set(family, (tok = tokenizers[family]!()));
  if (family === 'gpt_oss' && name !== 'gpt_oss_no_sysprompt') {
    // The cookbook writes today's date into the system prompt; the fixtures fix it.
    const effort = name.split('_')[2] as 'low' | 'medium' | 'high';
    return new GptOssRenderer(tok, name, { useSystemPrompt: true, reasoningEffort: effort, currentDate: expected.gpt_oss_date });
  }
  return getRenderer(name, tok);
}

function rle(weights: number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < weights.length) {
    let j = i;
    while (j < weights.length && weights[j] === weights[i]) j++;
    out.push(`${weights[i]}x${j - i}`);
    i = j;
  }
  return out.join(' ');
}

/** A message as the cookbook's message_to_jsonable writes it (tool call ids null when absent). */
function canonical(m: Message): unknown {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.tool_calls) out.tool_calls = m.tool_calls.map((c) => ({ type: 'function', id: c.id ?? null, function: c.function }));
  if (m.unparsed_tool_calls) out.unparsed_tool_calls = m.unparsed_tool_calls;
  for (const k of ['trainable', 'tool_call_id', 'name'] as const) if (m[k] !== undefined) out[k] = m[k];
  return out;
}

function attempt<T>(fn: () => T): Outcome<T> {
  try {
    return { ok: fn() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Both refused, or both produced the same value. */
function assertSame<T>(got: Outcome<T>, want: Outcome<unknown>, what: string, map: (v: T) => unknown = (v) => v): void {
  if ('error' in want) {
    assert.ok('error' in got, `${what}: the cookbook refuses this (${want.error}) but we produced a result`);
    return;
  }
  if ('error' in got) assert.fail(`${what}: we refused (${got.error}) but the cookbook produced a result`);
  assert.deepEqual(map(got.ok), want.ok, what);
}

const TRAIN_ON_WHAT: TrainOnWhat[] = [
  'last_assistant_message',
  'last_assistant_turn',
  'all_assistant_messages',
  'all_messages',
  'all_tokens',
  'all_user_and_system_messages',
  'customized',
];

test('the fixtures cover every gpt-oss and DeepSeek renderer name the cookbook accepts', () => {
  assert.deepEqual(Object.keys(expected.renderers).sort(), Object.keys(tables).sort());
  assert.equal(Object.keys(tables).length, 12);
});

for (const [name, want] of Object.entries(expected.renderers)) {
  test(`${name}: stop sequences, prompts, supervised examples and parses match tinker-cookbook`, () => {
    const r = rendererFor(name);
    assert.deepEqual(r.getStopSequences(), want.stop, 'stop sequences');
    const convs = new Map(expected.conversations.map((c) => [c.id, c]));
    for (const c of want.cases) {
      const conv = convs.get(c.id)!;
      const declares = conv.tools !== undefined || conv.system_prompt !== undefined;
      const prefix = attempt(() => (declares ? r.createConversationPrefixWithTools!(conv.tools ?? [], conv.system_prompt ?? '') : []));
      assertSame(prefix, c.prefix, `${c.id}: tool prefix`, (ms) => ms.map(canonical));
      if ('error' in prefix) continue;
      const messages = [...prefix.ok, ...conv.messages];
      for (const p of c.prompts ?? []) {
        const got = attempt(() => toInts(r.buildGenerationPrompt(messages.slice(0, p.cut))));
        assertSame(got, p, `${c.id}: generation prompt of the first ${p.cut} messages`);
      }
      for (const what of TRAIN_ON_WHAT) {
        const msgs =
          what === 'customized' ? messages.map((m, i) => ({ ...m, trainable: m.role === 'assistant' && i % 2 === 1 })) : messages;
        const got = attempt(() => r.buildSupervisedExample(msgs, what));
        const want = c.supervised![what]!;
        const wantFull = 'ok' in want ? { ok: { tokens: want.ok.tokens ?? c.supervised_tokens, weights: want.ok.weights } } : want;
        assertSame(got, wantFull, `${c.id}: supervised example, ${what}`, (ex) => ({
          tokens: toInts(ex.modelInput),
          weights: rle(ex.weights),
        }));
      }
    }
    for (const [i, p] of want.parses.entries()) {
      const got = attempt(() => r.parseResponse(p.tokens));
      assertSame(got, p, `parse #${i} of ${JSON.stringify(r.tokenizer.decode(p.tokens))}`, (res) => ({
        message: canonical(res.message),
        termination: res.termination,
      }));
    }
  });
}

test('validate: every gpt-oss and DeepSeek model of the registry with each recommended renderer; a family renderer on another family refused', async () => {
  const { modelProblems } = await import('../../config/model-fit');
  const { allModels } = await import('../../chat/models');
  const ours = allModels().filter((m) => /^(openai\/gpt-oss|deepseek-ai\/DeepSeek-V(3\.1|4\.1))/.test(m.name));
  assert.deepEqual(ours.map((m) => m.name).sort(), [
    'deepseek-ai/DeepSeek-V3.1',
    'deepseek-ai/DeepSeek-V3.1-Base',
    'deepseek-ai/DeepSeek-V4.1-Flash',
    'deepseek-ai/DeepSeek-V4.1-Flash-1017',
    'openai/gpt-oss-120b',
    'openai/gpt-oss-20b',
  ]);
  for (const m of ours) {
    for (const r of m.recommendedRenderers) assert.deepEqual(modelProblems({ modelName: m.name, rendererName: r }), [], `${m.name} with ${r}`);
  }
  assert.match(modelProblems({ modelName: 'deepseek-ai/DeepSeek-V3.1', rendererName: 'gpt_oss_no_sysprompt' }).join(), /cannot render for deepseek-ai\/DeepSeek-V3.1/);
  assert.match(modelProblems({ modelName: 'openai/gpt-oss-20b', rendererName: 'deepseekv3' }).join(), /cannot render for openai\/gpt-oss-20b/);
});
