// Parity with tinker-cookbook 0.6.1, for every renderer name in our registry: the cookbook (Python, in the venv of
// test/helpers/cookbook-venv.ts) generates a seeded corpus per renderer (system prompts, multi-turn, tool
// declarations, calls and results, thinking as parts and as strings, unicode and whitespace edge cases, special
// tokens written in text) and answers for it; our renderers must give the same generation prompts (also with a
// prefill), the same tokens and weights for every TrainOnWhat, the same build_supervised_examples, stop sequences
// and parse_response results (message and termination), and fail where the cookbook raises.
// Both sides read the same tokenizer files (parity/tokenizer-specs.ts). PARITY_CONVERSATIONS sets the corpus size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { allModels, getModelInfo, getRenderer, RENDERER_NAMES, type Message, type ModelInput, type Renderer, type Tokenizer, type TrainOnWhat } from '../../chat';
import { findTokenizerFiles } from '../../chat/tokenizer-files';
import { tokenizerFromFiles } from '../../chat/tokenizers';
import { cookbookVenv } from '../helpers/cookbook-venv';
import { LIBTORCH_LIBS, libtorchCpuDir } from '../helpers/libtorch-cpu';
import { O200kChatTokenizer } from '../../chat/o200k-chat-tokenizer';
import { TmlV0Renderer } from '../../chat/renderers/tml-v0';
import { tokenizerSpecFor, type TokenizerSpec } from './parity/tokenizer-specs';

const run = promisify(execFile);
const N = Number(process.env.PARITY_CONVERSATIONS ?? 200);
/** PARITY_RENDERERS=a,b: only those renderers (for working on one family; CI runs all). */
const ONLY = process.env.PARITY_RENDERERS ? new Set(process.env.PARITY_RENDERERS.split(',')) : null;

/**
 * Cookbook renderers that wrap tml_renderers >= 0.4.1, which PyPI does not have. (tml_v0 is checked: the cookbook's
 * tml_v0.py runs on PyPI's tml-renderers 0.2.1, which has its renderer and tokenizer.)
 */
export const NOT_CHECKABLE: Record<string, string> = {
  kimi_k31_pro_max_reasoning: 'wraps tml_renderers (Kimi K3 tokenizer and renderer)',
  kimi_k31_pro_high_reasoning: 'wraps tml_renderers (Kimi K3 tokenizer and renderer)',
  kimi_k31_pro_low_reasoning: 'wraps tml_renderers (Kimi K3 tokenizer and renderer)',
  kimi_k31_pro_disable_thinking: 'wraps tml_renderers (Kimi K3 tokenizer and renderer)',
  kimi_k31_pro_no_reasoning_effort: 'wraps tml_renderers (Kimi K3 tokenizer and renderer)',
};

/**
 * Renderer names that are this project's, not the cookbook's (chat/README.md): role_colon_tools, role_colon with a
 * tool format, checked against the cookbook's role_colon in test/chat/role-colon-parity.test.ts.
 */
const OURS_ONLY = new Set(['role_colon_tools']);

/** role_colon parses as the cookbook's (a <tool_call> stays text): no renderer checked here has an extension. */
function extensionApplies(_renderer: string, _want: unknown): boolean {
  return false;
}

/** More (renderer, model) pairs worth checking than the first model per renderer. */
const EXTRA: [string, string][] = [['role_colon', 'Qwen/Qwen3-8B-Base']];

type Flat = (number | { image: number })[];
type Err = { error: string };
interface PyCase {
  messages: Message[];
  prompt: Flat | Err;
  prefill?: string;
  prompt_prefill?: Flat | Err;
  effort?: number;
  prompt_effort?: Flat | Err;
  supervised_effort?: { tokens: Flat; weights: number[] } | Err;
  trainable?: boolean[];
  supervised: Record<string, { tokens: Flat; weights: number[] } | Err>;
  examples: { tokens: Flat; weights: number[] }[] | Err;
}
interface PyResult {
  renderer: string;
  fatal?: string;
  stop: (string | number)[];
  cases: PyCase[];
  parses: { tokens: number[]; result: { message: Record<string, unknown>; termination: string } | Err }[];
}

const isErr = (v: unknown): v is Err => typeof v === 'object' && v !== null && 'error' in v;

function flat(m: ModelInput): Flat {
  return m.chunks.flatMap((c): Flat => (c.type === 'encoded_text' ? c.tokens : [{ image: c.expected_tokens }]));
}

function attempt<T>(f: () => T): T | Err {
  try {
    return f();
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Our parse result in the cookbook's message_to_jsonable shape (tool call ids null when absent). */
function jsonable(m: Message): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.tool_calls) out.tool_calls = m.tool_calls.map((c) => ({ type: 'function', id: c.id ?? null, function: { name: c.function.name, arguments: c.function.arguments } }));
  if (m.unparsed_tool_calls) out.unparsed_tool_calls = m.unparsed_tool_calls.map((u) => ({ raw_text: u.raw_text, error: u.error }));
  for (const k of ['trainable', 'tool_call_id', 'name'] as const) if (m[k] !== undefined) out[k] = m[k];
  return out;
}

/** JSON decoder messages differ between Python and us; the rest of an unparsed call's error must match. */
function normalizeErrors(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (k, x) => (k === 'error' && typeof x === 'string' && x.startsWith('Invalid JSON:') ? 'Invalid JSON: …' : x));
}

interface Job {
  key: string;
  renderer: string;
  spec: TokenizerSpec;
  /** Our tokenizer when it is not read from files (tml_v0: o200k_base_chat). */
  ours?: () => Tokenizer;
}

function compareJob(job: Job, res: PyResult, ours: Renderer): string[] {
  const diffs: string[] = [];
  const same = (what: string, a: unknown, b: unknown) => {
    if (isErr(a) && isErr(b)) return;
    try {
      assert.deepEqual(normalizeErrors(a), normalizeErrors(b));
    } catch {
      diffs.push(`${what}: cookbook ${JSON.stringify(b).slice(0, 600)}\n      ours ${JSON.stringify(a).slice(0, 600)}`);
    }
  };
  same('stop sequences', ours.getStopSequences(), res.stop);
  res.cases.forEach((c, i) => {
    const msgs = c.messages;
    const promptMsgs = msgs.length && msgs[msgs.length - 1]!.role === 'assistant' ? msgs.slice(0, -1) : msgs;
    const at = `case ${i} (${JSON.stringify(msgs).slice(0, 300)})`;
    same(`${at} generation prompt`, attempt(() => flat(ours.buildGenerationPrompt(promptMsgs))), c.prompt);
    if (c.effort !== undefined) {
      const tml = ours as TmlV0Renderer;
      same(`${at} prompt with effort ${c.effort}`, attempt(() => flat(tml.buildGenerationPrompt(promptMsgs, { effort: c.effort }))), c.prompt_effort);
      same(`${at} supervised all_assistant_messages with effort ${c.effort}`, attempt(() => {
        const ex = tml.buildSupervisedExample(msgs, 'all_assistant_messages', c.effort);
        return { tokens: flat(ex.modelInput), weights: ex.weights };
      }), c.supervised_effort);
    }
    if (c.prefill !== undefined) same(`${at} prompt with prefill ${JSON.stringify(c.prefill)}`, attempt(() => flat(ours.buildGenerationPrompt(promptMsgs, { prefill: c.prefill }))), c.prompt_prefill);
    for (const [tow, want] of Object.entries(c.supervised)) {
      const ms = tow === 'customized' ? msgs.map((m, j) => ({ ...m, trainable: c.trainable![j]! })) : msgs;
      const got = attempt(() => {
        const ex = ours.buildSupervisedExample(ms, tow as TrainOnWhat);
        return { tokens: flat(ex.modelInput), weights: ex.weights };
      });
      same(`${at} supervised ${tow}`, got, want);
    }
    same(`${at} build_supervised_examples`, attempt(() => ours.buildSupervisedExamples(msgs).map((e) => ({ tokens: flat(e.modelInput), weights: e.weights }))), c.examples);
  });
  for (const p of res.parses) {
    const got = attempt(() => {
      const r = ours.parseResponse(p.tokens);
      return { message: jsonable(r.message), termination: r.termination };
    });
    if (!isErr(p.result) && !isErr(got) && extensionApplies(job.renderer, p.result)) {
      const m = got.message as { tool_calls?: unknown[]; unparsed_tool_calls?: unknown[] };
      same(`parse (extension) termination ${JSON.stringify(p.tokens.slice(0, 40))}`, got.termination, p.result.termination);
      if (!m.tool_calls?.length && !m.unparsed_tool_calls?.length) diffs.push(`parse (extension) ${JSON.stringify(p.tokens.slice(0, 40))}: the <tool_call> blocks were not read`);
      continue;
    }
    same(`parse ${JSON.stringify(job.spec.files.dir ? p.tokens.slice(0, 40) : p.tokens)}`, got, p.result);
  }
  return diffs;
}

const jobs: Job[] = [];
const unchecked: string[] = [];
for (const name of RENDERER_NAMES) {
  if (NOT_CHECKABLE[name] || OURS_ONLY.has(name) || name === 'tml_v0') continue; // tml_v0: its own job below
  const spec = tokenizerSpecFor(name);
  if (!spec) unchecked.push(name);
  else jobs.push({ key: name, renderer: name, spec });
}
// tml_v0 against the cookbook's tml_v0.py on tml-renderers 0.2.1 (PyPI), each side with its own o200k_base_chat.
const TML_MODEL = 'thinkingmachines/Inkling';
jobs.push({
  key: `tml_v0@${TML_MODEL}`,
  renderer: 'tml_v0',
  spec: { label: 'o200k_base_chat (ours: js-tiktoken ranks; cookbook: tml-renderers 0.2.1)', files: { dir: '', origin: 'tml', config: {} }, py: { kind: 'tml', name: TML_MODEL, libs: [] } as unknown as TokenizerSpec['py'] },
  ours: () => new O200kChatTokenizer(TML_MODEL),
});
for (const [renderer, model] of EXTRA) {
  const files = findTokenizerFiles(model);
  if (files) jobs.push({ key: `${renderer}@${model}`, renderer, spec: { label: `${model} (${files.origin})`, files, py: { file: path.join(files.dir, 'tokenizer.json'), bos: (files.config.bos_token as string) ?? null, eos: (files.config.eos_token as string) ?? null, cleanup: files.config.clean_up_tokenization_spaces === true, name: model } } });
}

if (ONLY) jobs.splice(0, jobs.length, ...jobs.filter((j) => ONLY.has(j.renderer)));

interface PyOutput {
  results: PyResult[];
  model_info: { models: Record<string, { recommended: string[]; is_vl: boolean; is_chat: boolean; tml: boolean }>; kimi_revisions: Record<string, string> };
}

let cookbook: Promise<PyOutput> | undefined;

/** One cookbook run for both tests: every renderer's corpus and answers, and model_info.py's registry. */
function cookbookOutput(): Promise<PyOutput> {
  cookbook ??= (async () => {
    const venv = await cookbookVenv();
    const libs = await libtorchCpuDir(venv.python);
    for (const j of jobs) if (j.ours) (j.spec.py as unknown as { libs: string[] }).libs = LIBTORCH_LIBS.map((l) => path.join(libs, l));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parity-'));
    const all = jobs.map((j, i) => ({ renderer: j.renderer, tokenizer: j.spec.py, seed: 1000 + i, n: N }));
    // Two cookbook processes (CI has two cores), each on every other job; answers put back in job order.
    const halves = [0, 1].map((h) => all.filter((_, i) => i % 2 === h));
    const outs = await Promise.all(
      halves.map(async (half, h) => {
        const input = path.join(dir, `jobs-${h}.json`);
        const output = path.join(dir, `out-${h}.json`);
        writeFileSync(input, JSON.stringify({ jobs: half }));
        await run(venv.python, [path.join(__dirname, 'parity', 'cookbook_parity.py'), input, output], { maxBuffer: 64 << 20, timeout: 15 * 60_000 });
        return JSON.parse(readFileSync(output, 'utf8')) as PyOutput;
      }),
    );
    const results = all.map((_, i) => outs[i % 2]!.results[Math.floor(i / 2)]!);
    return { results, model_info: outs[0]!.model_info };
  })();
  return cookbook;
}

test('chat/models is model_info.py: every model, its recommended renderers (in order), vision flag, tml tokenizer', { timeout: 20 * 60_000 }, async () => {
  const { model_info: info } = await cookbookOutput();
  const ours = Object.fromEntries(
    allModels().map((m) => [m.name, { recommended: [...m.recommendedRenderers], is_vl: m.isVl, is_chat: m.isChat, tml: m.tokenizer.kind === 'tml' }]),
  );
  assert.deepEqual(ours, info.models);
  for (const [model, revision] of Object.entries(info.kimi_revisions)) assert.deepEqual(getModelInfo(model).tokenizer, { kind: 'tiktoken', repo: model, revision });
});

test(`every registry renderer matches tinker-cookbook 0.6.1 (${N} conversations each)`, { timeout: 20 * 60_000 }, async (t) => {
  assert.deepEqual(unchecked, [], `renderers with no tokenizer to check them with (add the family to test/chat/parity/synthetic-tokenizers.json, or list it in NOT_CHECKABLE with why): ${unchecked.join(', ')}`);

  const results = (await cookbookOutput()).results;

  const report: string[] = [];
  let failed = 0;
  results.forEach((res, i) => {
    const job = jobs[i]!;
    if (res.fatal) {
      failed++;
      report.push(`${job.key}: the cookbook side failed:\n${res.fatal}`);
      return;
    }
    const ours = getRenderer(job.renderer, job.ours ? job.ours() : tokenizerFromFiles(job.spec.files, job.spec.py.name));
    const diffs = compareJob(job, res, ours);
    const checked = `${res.cases.length} conversations, ${res.parses.length} parses, tokenizer ${job.spec.label}`;
    t.diagnostic(`${job.key}: ${diffs.length ? `${diffs.length} differences` : 'identical'} (${checked})`);
    if (diffs.length) {
      failed++;
      report.push(`${job.key} (${checked}): ${diffs.length} differences, first ones:\n    ${diffs.slice(0, Number(process.env.PARITY_SHOW ?? 4)).join('\n    ')}`);
    }
  });
  for (const [name, why] of Object.entries(NOT_CHECKABLE)) t.diagnostic(`${name}: not checked: ${why}`);
  assert.equal(failed, 0, report.join('\n\n'));
});
