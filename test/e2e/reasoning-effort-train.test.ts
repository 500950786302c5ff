// Issue 20's Done-when "a Responses request with reasoning", for the reasoning-effort families, through a real run
// (Temporal, worker, store, proxy, runners) whose trainer is the local trainer standing in for hosted Tinker
// (AGL_TRAINER_STAND_IN_MODELS): a Responses request with reasoning: {effort: "medium"} to a gpt_oss_medium_reasoning
// run, and an Anthropic Messages request with thinking enabled to a deepseekv4_1 run, each train a step, and the
// forward_backward input the trainer received (AGL_TRAINER_RECORD_FWDBWD) holds exactly each answered turn: the
// renderer's generation prompt (the effort it states included) and the sampled token ids. The tokenizers ship
// offline (npm), so no stand-in tokenizer is needed.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { readJsonl, runPaths } from '../../records/run-files';
import { startRunners, type RunnerGroup } from '../../agents/runner';
import { getRenderer, getTokenizer, toInts } from '../../chat';
import { startOrAttach } from '../../cli/run-commands';
import type { RunConfig } from '../../config/run-config';
import type { Stack } from '../../dev/stack';
import { localRunConfig, startTestStack } from '../helpers/local-run';

const GPT_OSS = 'openai/gpt-oss-20b';
const DEEPSEEK = 'deepseek-ai/DeepSeek-V4.1-Flash';

interface Task {
  api: 'responses' | 'messages';
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
const answered: Answered[] = [];

function v1(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1') ? base : `${base}/v1`;
}

async function call(task: Task, endpoint: string, signal: AbortSignal): Promise<Answered> {
  const [route, body] =
    task.api === 'responses'
      ? ['responses', { model: task.model, max_output_tokens: 24, input: task.question, reasoning: { effort: 'medium', summary: 'auto' } }]
      : ['messages', { model: task.model, max_tokens: 24, messages: [{ role: 'user', content: task.question }], thinking: { type: 'enabled', budget_tokens: 1024 } }];
  const res = await fetch(`${v1(endpoint)}/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  const json = (await res.json()) as Record<string, any>;
  if (res.status !== 200) throw new Error(`${route}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return { prompt_token_ids: json.prompt_token_ids, token_ids: json.token_ids };
}

before(async () => {
  process.env.AGL_TRAINER_ENGINE = 'bigram';
  process.env.AGL_TRAINER_STAND_IN_MODELS = `${GPT_OSS},${DEEPSEEK}`;
  record = path.join(mkdtempSync(path.join(tmpdir(), 'agl-fwdbwd-')), 'fwdbwd.jsonl');
  process.env.AGL_TRAINER_RECORD_FWDBWD = record;
  ({ stack, dataDir, taskQueue } = await startTestStack('w20-effort', { runners: 0, initialModel: 'local/bigram' }));
  temporal = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
  runners = startRunners<Task>(
    4,
    async (task, ctx) => {
      answered.push(await call(task, ctx.llm!.endpoint, ctx.signal));
      return Math.random();
    },
    { storeUrl: stack.storeUrl, pollIntervalMs: 100, log: () => {} },
  );
});

after(async () => {
  await runners?.stop();
  await stack?.stop();
});

/** Each sampled run of a received datum (its logprobs are non-zero, the prompt's are 0) with the tokens before it. */
function receivedTurns(datum: { model_input: { chunks: { type: string; tokens?: number[] }[] }; loss_fn_inputs: Record<string, { data: number[] }> }): string[] {
  const input = datum.model_input.chunks.flatMap((c) => c.tokens ?? []);
  const target = datum.loss_fn_inputs.target_tokens!.data;
  const lp = datum.loss_fn_inputs.logprobs!.data;
  assert.deepEqual(input.slice(1), target.slice(0, -1), 'the input is the sequence, the targets the same shifted by one');
  const seq = [input[0]!, ...target];
  const sampled = [false, ...lp.map((x) => x !== 0)];
  const turns: string[] = [];
  for (let i = 0; i < seq.length; ) {
    if (!sampled[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < seq.length && sampled[j]) j++;
    turns.push(JSON.stringify({ prompt: seq.slice(0, i), answer: seq.slice(i, j) }));
    i = j;
  }
  return turns;
}

async function trainOn(name: string, api: Task['api'], model: string, renderer: string, effortLine: RegExp): Promise<void> {
  answered.length = 0;
  const from = existsSync(record) ? readFileSync(record, 'utf8').length : 0;
  const tasks: Task[] = ['What is 2+2?', 'What is 3+3?'].map((question) => ({ api, model, question }));
  const cfg: RunConfig = localRunConfig(stack!, dataDir, `w20-effort-${name}`, {
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
  assert.equal(answered.length, tasks.length * 2, 'every rollout was answered once');

  // The proxy rendered each prompt as the renderer renders the question, its effort included.
  const tok = getTokenizer(model);
  const r = getRenderer(renderer, tok);
  const rendered = new Set(tasks.map((t) => JSON.stringify(toInts(r.buildGenerationPrompt([{ role: 'user', content: t.question }])))));
  for (const a of answered) assert.ok(rendered.has(JSON.stringify(a.prompt_token_ids)), 'the answered prompt is the rendered conversation');
  assert.match(tok.decode(answered[0]!.prompt_token_ids), effortLine, 'the prompt states the renderer\'s effort');

  // What the trainer received for this run's step: exactly those turns.
  const lines = readFileSync(record, 'utf8').slice(from).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const steps = lines.filter((l) => !l.forward_only);
  assert.ok(steps.length >= 1, 'the trainer received a forward_backward');
  const received = steps.flatMap((l) => l.data.flatMap(receivedTurns)).sort();
  const expected = answered.map((a) => JSON.stringify({ prompt: a.prompt_token_ids, answer: a.token_ids })).sort();
  assert.deepEqual(received, expected, 'the datums the trainer received hold each answered turn, token for token');
}

test('gpt_oss_medium_reasoning: a Responses request with reasoning effort medium trains a step whose datums are the rendered tokens', { timeout: 600_000 }, async () => {
  await trainOn('gpt-oss', 'responses', GPT_OSS, 'gpt_oss_medium_reasoning', /Reasoning: medium\n/);
});

test('deepseekv4_1: an Anthropic request with thinking enabled trains a step whose datums are the rendered tokens', { timeout: 600_000 }, async () => {
  await trainOn('deepseek', 'messages', DEEPSEEK, 'deepseekv4_1', /Reasoning Effort: 75 /);
});
