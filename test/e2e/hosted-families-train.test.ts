// The Qwen3.5 and Qwen3-VL families trained through a real run (Temporal, worker, store, proxy, runners) whose
// trainer is the local trainer standing in for hosted Tinker (AGL_TRAINER_STAND_IN_MODELS: it serves the hosted
// name over folded token ids): a chat request with tools (Qwen3.5's XML tool declarations) and a Responses request
// to the thinking renderer (its prompt opens the <think> block) and a chat request with an image (qwen3_vl_instruct)
// each train a step, and the forward_backward input the trainer received (AGL_TRAINER_RECORD_FWDBWD, written by the
// trainer as it accepted the request) holds exactly each answered turn: the prompt token ids the proxy rendered and
// answered with (an image as the image chunk the renderer made, in its place), then the sampled token ids.
// The same for the reasoning-effort families, on the same stack: a Responses request with reasoning: {effort:
// "medium"} to a gpt_oss_medium_reasoning run and an Anthropic Messages request with thinking enabled to a
// deepseekv4_1 run; their prompts state the renderer's effort.
// Tokenizer: the Qwen3 files stand in for Qwen3.5's and Qwen3-VL's (test/helpers/stand-in-tokenizers.ts); gpt-oss's
// and DeepSeek's ship offline (npm).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { readJsonl, runPaths } from '../../records/run-files';
import { startRunners, type RunnerGroup } from '../../agents/runner';
import { getRenderer, getTokenizer, type Message } from '../../chat';
import { QWEN3_VL_IMAGE_PROCESSOR } from '../../chat/image-chunk';
import { startOrAttach } from '../../cli/run-commands';
import type { RunConfig } from '../../config/run-config';
import type { Stack } from '../../dev/stack';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { standInTokenizerDir } from '../helpers/stand-in-tokenizers';

const QWEN3_5 = 'Qwen/Qwen3.5-4B';
const VL = 'Qwen/Qwen3-VL-30B-A3B-Instruct';
const GPT_OSS = 'openai/gpt-oss-20b';
const DEEPSEEK = 'deepseek-ai/DeepSeek-V4.1-Flash';
// A 2x2 RGB PNG (made with PIL), inline as the APIs take it.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGNkZGJmYGBgYmBgYGBgAAAAcAAKM8X3iAAAAABJRU5ErkJggg==';
const IMAGE_URL = `data:image/png;base64,${PNG}`;
const TOOLS = [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

interface Task {
  kind: 'chat-tools' | 'responses' | 'image' | 'responses-effort' | 'messages-thinking';
  model: string;
  question: string;
}
interface Answered {
  prompt_token_ids: number[];
  token_ids: number[];
}

let stack: Stack | undefined;
let dataDir = '';
let taskQueue = '';
let record = '';
let runners: RunnerGroup<Task> | undefined;
let temporal: Client;
const answered = new Map<string, Answered[]>();

function v1(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1') ? base : `${base}/v1`;
}

async function call(task: Task, endpoint: string, signal: AbortSignal): Promise<Answered> {
  const [route, body] =
    task.kind === 'chat-tools'
      ? ['chat/completions', { model: task.model, max_tokens: 24, tools: TOOLS, messages: [{ role: 'system', content: 'Use tools.' }, { role: 'user', content: task.question }] }]
      : task.kind === 'image'
        ? ['chat/completions', { model: task.model, max_tokens: 24, messages: [{ role: 'user', content: [{ type: 'text', text: task.question }, { type: 'image_url', image_url: { url: IMAGE_URL } }] }] }]
        : task.kind === 'responses-effort'
          ? ['responses', { model: task.model, max_output_tokens: 24, input: task.question, reasoning: { effort: 'medium', summary: 'auto' } }]
          : task.kind === 'messages-thinking'
            ? ['messages', { model: task.model, max_tokens: 24, messages: [{ role: 'user', content: task.question }], thinking: { type: 'enabled', budget_tokens: 1024 } }]
            : ['responses', { model: task.model, max_output_tokens: 24, instructions: 'Think first.', input: task.question }];
  const res = await fetch(`${v1(endpoint)}/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  const json = (await res.json()) as Record<string, any>;
  if (res.status !== 200) throw new Error(`${route}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return { prompt_token_ids: json.prompt_token_ids, token_ids: route === 'chat/completions' ? json.choices[0].token_ids : json.token_ids };
}

before(async () => {
  process.env.AGL_TOKENIZER_DIR = standInTokenizerDir([QWEN3_5, VL]);
  process.env.AGL_TRAINER_ENGINE = 'bigram';
  process.env.AGL_TRAINER_STAND_IN_MODELS = [QWEN3_5, VL, GPT_OSS, DEEPSEEK].join(',');
  record = path.join(mkdtempSync(path.join(tmpdir(), 'agl-fwdbwd-')), 'fwdbwd.jsonl');
  process.env.AGL_TRAINER_RECORD_FWDBWD = record;
  ({ stack, dataDir, taskQueue } = await startTestStack('w20v-hosted', { runners: 0, initialModel: 'local/bigram' }));
  temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
  runners = startRunners<Task>(
    4,
    async (task, ctx) => {
      const a = await call(task, ctx.llm!.endpoint, ctx.signal);
      answered.set(ctx.rollout.rollout_id, [...(answered.get(ctx.rollout.rollout_id) ?? []), a]);
      return Math.random();
    },
    { storeUrl: stack.storeUrl, pollIntervalMs: 100, log: () => {} },
  );
});

after(async () => {
  await runners?.stop();
  await stack?.stop();
});

type WireChunk = { type: 'encoded_text'; tokens: number[] } | { type: 'image'; data: string; format: string; expected_tokens: number };

/**
 * Each action run of a received datum (sampled logprobs are non-zero, the prompt's are 0) with what precedes it,
 * and the image chunks of the input at their positions (an image's positions are 0 in the targets, as the cookbook
 * writes them, and in the flat prompt ids the proxy answered with).
 */
function receivedTurns(datum: { model_input: { chunks: WireChunk[] }; loss_fn_inputs: Record<string, { data: number[] }> }): string[] {
  const input: number[] = [];
  const images: unknown[] = [];
  for (const c of datum.model_input.chunks) {
    if (c.type === 'encoded_text') input.push(...c.tokens);
    else {
      images.push({ at: input.length, chunk: c });
      input.push(...new Array<number>(c.expected_tokens).fill(0));
    }
  }
  const target = datum.loss_fn_inputs.target_tokens!.data;
  const lp = datum.loss_fn_inputs.logprobs!.data;
  assert.equal(input.length, target.length, 'one target per input position');
  assert.deepEqual(input.slice(1), target.slice(0, -1), 'the input is the sequence, the targets the same shifted by one');
  const seq = [input[0]!, ...target];
  const isAction = [false, ...lp.map((x) => x !== 0)];
  const turns: string[] = [];
  for (let i = 0; i < seq.length; ) {
    if (!isAction[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < seq.length && isAction[j]) j++;
    turns.push(JSON.stringify({ prompt: seq.slice(0, i), answer: seq.slice(i, j), images }));
    i = j;
  }
  return turns;
}

async function trainOn(name: string, kind: Task['kind'], model: string, renderer: string, promptLooks?: RegExp): Promise<void> {
  answered.clear();
  const from = existsSync(record) ? readFileSync(record, 'utf8').length : 0;
  const tasks: Task[] = ['Weather in Paris?', 'Weather in Oslo?'].map((question) => ({ kind, model, question }));
  const cfg: RunConfig = localRunConfig(stack!, dataDir, `w20v-${name}`, {
    modelName: model,
    rendererName: renderer,
    maxTokens: 24,
    evalEvery: 0,
    saveEvery: 0,
    datasetBuilder: { batchSize: tasks.length, groupSize: 2, shuffle: false, trainDataset: tasks, valDataset: [tasks[0]!] },
  });
  const run = await startOrAttach(temporal, taskQueue, cfg);
  assert.equal((await run.handle.result()).batchesCompleted, 1);
  const [metrics] = readJsonl(runPaths(cfg.logPath).metrics) as Record<string, number>[];
  assert.equal(metrics!['train/skipped_empty_batch'], 0, 'a step was trained');

  const answers = [...answered.values()].flat();
  assert.equal(answers.length, tasks.length * 2, 'every rollout was answered once');
  // The proxy rendered each prompt as the renderer renders the conversation.
  const tok = getTokenizer(model);
  const r = getRenderer(renderer, tok, { imageProcessor: QWEN3_VL_IMAGE_PROCESSOR });
  const conv = (q: string): Message[] =>
    kind === 'chat-tools'
      ? [...r.createConversationPrefixWithTools!(TOOLS.map((t) => t.function), 'Use tools.'), { role: 'user', content: q }]
      : kind === 'image'
        ? [{ role: 'user', content: [{ type: 'text', text: q }, { type: 'image', image: IMAGE_URL }] }]
        : kind === 'responses'
          ? [{ role: 'system', content: 'Think first.' }, { role: 'user', content: q }]
          : [{ role: 'user', content: q }];
  // The rendered prompts, flat (an image's positions 0, as the API answers them) with their image chunks.
  const renderedOf = new Map(
    tasks.map((t) => {
      const chunks = r.buildGenerationPrompt(conv(t.question)).chunks;
      const flat: number[] = [];
      const images: unknown[] = [];
      for (const c of chunks) {
        if (c.type === 'image') images.push({ at: flat.length, chunk: c });
        flat.push(...(c.type === 'image' ? new Array<number>(c.expected_tokens).fill(0) : c.tokens));
      }
      return [JSON.stringify(flat), images] as const;
    }),
  );
  for (const a of answers) assert.ok(renderedOf.has(JSON.stringify(a.prompt_token_ids)), 'the answered prompt is the rendered conversation');
  if (kind === 'image') assert.ok([...renderedOf.values()].every((ims) => ims.length === 1), 'one image chunk per prompt');
  if (kind === 'chat-tools') assert.match(tok.decode(answers[0]!.prompt_token_ids), /<function=example_function_name>/, "Qwen3.5's XML tool format");
  if (promptLooks) assert.match(tok.decode(answers[0]!.prompt_token_ids), promptLooks, "the prompt states the renderer's effort");
  if (kind === 'responses') assert.match(tok.decode(answers[0]!.prompt_token_ids), /<\|im_start\|>assistant\n<think>\n$/, 'the thinking prompt opens the think block');

  // What the trainer received for this run's step: exactly those turns.
  const lines = readFileSync(record, 'utf8').slice(from).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const steps = lines.filter((l) => !l.forward_only);
  assert.ok(steps.length >= 1, 'the trainer received a forward_backward');
  const received = steps.flatMap((l) => l.data.flatMap(receivedTurns)).sort();
  const expected = answers.map((a) => JSON.stringify({ prompt: a.prompt_token_ids, answer: a.token_ids, images: renderedOf.get(JSON.stringify(a.prompt_token_ids)) })).sort();
  assert.deepEqual(received, expected, 'the datums the trainer received hold each answered turn, token for token');
}

test('qwen3_5: a chat request with tools trains a step whose datums are the rendered tokens', { timeout: 600_000 }, async () => {
  await trainOn('tools', 'chat-tools', QWEN3_5, 'qwen3_5');
});

test('qwen3_5: a Responses request to the thinking renderer trains a step whose datums are the rendered tokens', { timeout: 600_000 }, async () => {
  await trainOn('responses', 'responses', QWEN3_5, 'qwen3_5');
});

test('qwen3_vl_instruct: a chat request with an image trains a step whose datums hold the rendered image chunk in its place', { timeout: 600_000 }, async () => {
  await trainOn('image', 'image', VL, 'qwen3_vl_instruct');
});

test('gpt_oss_medium_reasoning: a Responses request with reasoning effort medium trains a step whose datums are the rendered tokens', { timeout: 600_000 }, async () => {
  await trainOn('gpt-oss-effort', 'responses-effort', GPT_OSS, 'gpt_oss_medium_reasoning', /Reasoning: medium\n/);
});

test('deepseekv4_1: an Anthropic request with thinking enabled trains a step whose datums are the rendered tokens', { timeout: 600_000 }, async () => {
  await trainOn('deepseek-thinking', 'messages-thinking', DEEPSEEK, 'deepseekv4_1', /Reasoning Effort: 75 /);
});
