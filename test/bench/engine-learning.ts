// `npm run bench -- engine-learning`: a learning curve on a real architecture. The tiny random-init Qwen3
// (engines/skyrl/make_tiny_qwen3.py) served by SkyRL's Tinker-API server (JAX backend, on CPU) learns the hello task
// in two stages, through the same engine:
//   1. a supervised warm start, as tinker-cookbook's supervised loop does: each conversation (user: helloPrompt(N),
//      assistant: "I am N") rendered by the run's renderer, loss weights on the assistant's tokens, forward_backward
//      with `cross_entropy` and optim_step, with the project's Tinker client (tinker/) and renderers (chat/); its
//      weights saved as a state;
//   2. the RL hello run, the project's durable loop (the Temporal workflow, with the whole stack: Temporal, store,
//      SkyRL, proxy, worker, runners), started from that state with `loadCheckpointPath` (weights only).
// A random model earns no reward and so no advantage; the warm start brings it to where the sparse reward
// (helloReward: 1 for "I am N") is neither 0 nor 1, and RL has to do the rest: copy the number from the prompt.
// Prints a markdown table (SFT loss per step; per RL step train reward, eval reward where evaluated, seconds) and
// writes it with --out (docs/engine-learning.md).
//
//   npm run bench -- engine-learning [--tasks 1,2,3,4,5,6,7,8] [--seed 0]
//                                    [--sft-steps 30] [--sft-lr 0.02] [--sft-batch 16]
//                                    [--rl-steps 20] [--rl-lr 0.01] [--group 8] [--eval-every 5] [--eval-repeats 4]
//                                    [--agent hello|hello-dense] [--loss importance_sampling|ppo]
//                                    [--lora-rank 8] [--max-tokens 8] [--runners 8]
//                                    [--wait-load 2] [--wait-min 15] [--out docs/engine-learning.md] [--verbose]
//
// Seeds: the tiny Qwen3's weights (make_tiny_qwen3.py, seed 0, what the stack makes), --seed for the SFT adapter's
// init and example order and for the RL run's datasetBuilder.seed (its adapter init, data order and every rollout's
// sampling seed). The engine's state lives under .data/bench/engine-learning/ (its uv environment and the tiny model
// are kept there between runs; the databases are wiped at each start).
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { startStack, type Stack } from '../../dev/stack';
import { validateRunConfig } from '../../config/load';
import type { RunConfigInput } from '../../config/run-config';
import { startOrAttach } from '../../cli/run-commands';
import { readJsonl, runPaths } from '../../records/run-files';
import type { trainingRun } from '../../workflows/training-run';
import { ServiceClient, type Datum } from '../../tinker';
import { getRenderer, getTokenizer, textContent, toInts, type Message } from '../../chat';
import { helloPrompt, helloReward } from '../../agents/examples/hello-task';
import { helloDenseReward } from '../../agents/examples/hello';
import { loadAverage } from './bench-kit';

const ROOT = path.resolve(__dirname, '..', '..');
const MODEL = 'Qwen/Qwen3-8B';
/** The renderer of both stages: its supervised example and its generation prompt agree on the empty think block. */
const RENDERER = 'qwen3_disable_thinking';

const { values: v } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1,2,3,4,5,6,7,8' },
    seed: { type: 'string', default: '0' },
    'sft-steps': { type: 'string', default: '30' },
    'sft-lr': { type: 'string', default: '0.02' },
    'sft-batch': { type: 'string', default: '16' },
    'rl-steps': { type: 'string', default: '20' },
    'rl-lr': { type: 'string', default: '0.01' },
    group: { type: 'string', default: '8' },
    'eval-every': { type: 'string', default: '5' },
    'eval-repeats': { type: 'string', default: '4' },
    agent: { type: 'string', default: 'hello' },
    loss: { type: 'string', default: 'importance_sampling' },
    'lora-rank': { type: 'string', default: '8' },
    'max-tokens': { type: 'string', default: '8' },
    runners: { type: 'string', default: '8' },
    'wait-load': { type: 'string', default: '2' },
    'wait-min': { type: 'string', default: '15' },
    out: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
  strict: true,
});

function fail(line: string): never {
  process.stderr.write(`bench engine-learning: ${line}\n`);
  process.exit(2);
}
function num(name: keyof typeof v, check: (x: number) => boolean, what: string): number {
  const x = Number(v[name]);
  if (!check(x)) fail(`--${name} must be ${what}, got ${JSON.stringify(v[name])}`);
  return x;
}
const int = (min: number) => (x: number) => Number.isInteger(x) && x >= min;
const TASKS = String(v.tasks).split(',').map((t) => t.trim()).filter(Boolean);
if (TASKS.length === 0) fail('--tasks names nothing');
const SEED = num('seed', int(0), 'a non-negative integer');
const SFT_STEPS = num('sft-steps', int(0), 'a non-negative integer');
const SFT_LR = num('sft-lr', (x) => x > 0 && x < 1, 'a learning rate between 0 and 1');
const SFT_BATCH = num('sft-batch', int(1), 'a positive integer');
const RL_STEPS = num('rl-steps', int(0), 'a non-negative integer');
const RL_LR = num('rl-lr', (x) => x > 0 && x < 1, 'a learning rate between 0 and 1');
const GROUP = num('group', int(2), 'an integer of at least 2');
const EVAL_EVERY = num('eval-every', int(0), 'a non-negative integer');
const EVAL_REPEATS = num('eval-repeats', int(1), 'a positive integer');
const LORA_RANK = num('lora-rank', int(1), 'a positive integer');
const MAX_TOKENS = num('max-tokens', int(1), 'a positive integer');
const RUNNERS = num('runners', int(1), 'a positive integer');
const WAIT_LOAD = num('wait-load', (x) => x > 0, 'a positive number');
const WAIT_MIN = num('wait-min', (x) => x >= 0, 'a non-negative number');
const AGENT = String(v.agent);
if (AGENT !== 'hello' && AGENT !== 'hello-dense') fail(`--agent must be hello or hello-dense, got ${JSON.stringify(AGENT)}`);
const LOSS = String(v.loss) as 'importance_sampling' | 'ppo';
if (LOSS !== 'importance_sampling' && LOSS !== 'ppo') fail(`--loss must be importance_sampling or ppo, got ${JSON.stringify(LOSS)}`);
const reward = AGENT === 'hello' ? helloReward : helloDenseReward;

const t0 = Date.now();
const say = (line: string) => process.stdout.write(`${line}\n`);
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const f = (x: number | null | undefined, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(d));

/** mulberry32: the SFT example order, from --seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const conversation = (task: string): Message[] => [
  { role: 'user', content: helloPrompt(task) },
  { role: 'assistant', content: `I am ${task}` },
];

interface SftRow {
  step: number;
  /** Mean negative log-likelihood per weighted (assistant) token, before this step's update. */
  loss: number;
  /** The same on the answer's last content token (the number), the one the prompt has to be copied for. */
  answerNll: number;
  seconds: number;
}

interface RlRow {
  step: number;
  train: number | null;
  eval: number | null;
  seconds: number | null;
}

/** The cookbook's supervised datum: inputs tokens[:-1], targets tokens[1:], the weights shifted with them. */
function supervisedDatum(tokens: number[], weights: number[]): Datum {
  return { modelInput: tokens.slice(0, -1), lossFnInputs: { target_tokens: tokens.slice(1), weights: weights.slice(1) } };
}

async function waitForQuiet(): Promise<void> {
  const deadline = Date.now() + WAIT_MIN * 60_000;
  for (;;) {
    const one = Number(loadAverage().split(' ')[0]);
    if (one < WAIT_LOAD) return;
    if (Date.now() >= deadline) {
      log(`load average ${loadAverage()} still at or above ${WAIT_LOAD} after ${WAIT_MIN} min: measuring anyway`);
      return;
    }
    log(`load average ${loadAverage()}: waiting for the 1-minute figure to fall below ${WAIT_LOAD}`);
    await sleep(30_000);
  }
}

/** Stage 1: the supervised warm start. Returns the per-step rows, the saved state and what the SFT model answers. */
async function supervised(stack: Stack): Promise<{ rows: SftRow[]; statePath: string; sampled: { reward: number; answers: string[] } }> {
  const tokenizer = getTokenizer(MODEL);
  const renderer = getRenderer(RENDERER, tokenizer, { modelName: MODEL });
  const examples = new Map(
    TASKS.map((task) => {
      const ex = renderer.buildSupervisedExample(conversation(task), 'last_assistant_message');
      return [task, { tokens: toInts(ex.modelInput), weights: ex.weights }];
    }),
  );
  // What sampling continues from must be the supervised example's prefix: the tokens before the first weighted one.
  for (const [task, ex] of examples) {
    const prompt = toInts(renderer.buildGenerationPrompt([conversation(task)[0]!]));
    const first = ex.weights.findIndex((w) => w > 0);
    if (first !== prompt.length || prompt.some((t, i) => ex.tokens[i] !== t)) {
      throw new Error(`${RENDERER}: the generation prompt of task ${task} is not the supervised example's prefix (${prompt.length} prompt tokens, first trained token at ${first})`);
    }
  }
  const service = new ServiceClient({ baseUrl: stack.trainerUrl, apiKey: 'tml-dummy', log });
  const tc = await service.createLoraTrainingClient(MODEL, { rank: LORA_RANK, seed: SEED });
  log(`sft: model ${tc.modelId} (LoRA rank ${LORA_RANK}, seed ${SEED}), ${SFT_STEPS} steps of ${SFT_BATCH} examples at lr ${SFT_LR}`);
  const order = rng(SEED);
  const rows: SftRow[] = [];
  for (let step = 0; step < SFT_STEPS; step++) {
    const started = Date.now();
    // Every task equally often (as far as SFT_BATCH allows), from a seeded offset.
    const offset = Math.floor(order() * TASKS.length);
    const batch = Array.from({ length: SFT_BATCH }, (_, i) => TASKS[(offset + i) % TASKS.length]!);
    const data = batch.map((task) => {
      const ex = examples.get(task)!;
      return supervisedDatum(ex.tokens, ex.weights);
    });
    const fb = tc.forwardBackward(data, 'cross_entropy');
    const opt = tc.optimStep({ learningRate: SFT_LR, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
    const [res] = await Promise.all([fb, opt]);
    let nll = 0;
    let weight = 0;
    const answer: number[] = [];
    res.lossFnOutputs.forEach((out, i) => {
      const w = data[i]!.lossFnInputs.weights!;
      const lp = out.logprobs!;
      for (let t = 0; t < w.length; t++) {
        nll -= w[t]! * lp[t]!;
        weight += w[t]!;
      }
      // The weighted positions are "I", " am", " ", N, <|im_end|>: the number is the one before the end.
      const last = w.findLastIndex((x) => x > 0);
      answer.push(-lp[last - 1]!);
    });
    const row = { step, loss: nll / weight, answerNll: mean(answer), seconds: (Date.now() - started) / 1000 };
    rows.push(row);
    log(`sft: step ${step} loss/token ${f(row.loss, 3)} answer-token NLL ${f(row.answerNll, 3)} (${f(row.seconds, 1)} s)`);
  }
  const statePath = await tc.saveState('sft-final');
  // What the warm-started model answers, sampled as the RL run's eval will (temperature 1), before RL touches it.
  const sampler = await tc.saveWeightsAndGetSamplingClient();
  const rewards: number[] = [];
  const answers: string[] = [];
  for (const [k, task] of TASKS.entries()) {
    const prompt = toInts(renderer.buildGenerationPrompt([conversation(task)[0]!]));
    const res = await sampler.sample(prompt, EVAL_REPEATS, { maxTokens: MAX_TOKENS, temperature: 1, topK: -1, topP: 1, stop: renderer.getStopSequences(), seed: SEED * 1000 + k });
    for (const s of res.sequences) {
      const text = textContent(renderer.parseResponse(s.tokens).message);
      rewards.push(reward(task, text));
      if (answers.length < 8 && s === res.sequences[0]) answers.push(`${task}: ${JSON.stringify(text)}`);
    }
  }
  log(`sft: state ${statePath}; sampled reward ${f(mean(rewards))}; ${answers.join(', ')}`);
  await tc.unload().catch((err: Error) => log(`sft: unload refused (${err.message}); the session's staleness frees the slot`));
  await service.close('success').catch(() => undefined);
  return { rows, statePath, sampled: { reward: mean(rewards), answers } };
}

/** Stage 2: the RL hello run, through the workflow, from the SFT state. */
async function reinforce(stack: Stack, taskQueue: string, dataDir: string, statePath: string): Promise<{ rows: RlRow[]; seconds: number; error?: string }> {
  const runName = `engine-learning-s${SEED}-${taskQueue.slice(-8)}`;
  const logPath = path.join(dataDir, 'runs', runName);
  const input: RunConfigInput = {
    runName,
    learningRate: RL_LR,
    modelName: MODEL,
    rendererName: RENDERER,
    baseUrl: stack.trainerUrl,
    storeAddress: stack.storeUrl,
    llmProxyPort: stack.proxyPort,
    logPath,
    engine: { name: 'skyrl', backend: 'jax', maxLoraRank: LORA_RANK },
    loraRank: LORA_RANK,
    loadCheckpointPath: statePath,
    lossFn: LOSS,
    maxTokens: MAX_TOKENS,
    concurrency: 64,
    evalEvery: EVAL_EVERY,
    saveEvery: Math.max(1, RL_STEPS),
    rolloutTimeoutSeconds: 300,
    pauseAfterBatchesWithoutReward: 0,
    // One batch per epoch holds every task once (a group of GROUP rollouts each); the eval asks each task EVAL_REPEATS times.
    datasetBuilder: {
      batchSize: TASKS.length,
      groupSize: GROUP,
      nEpochs: Math.max(1, RL_STEPS),
      seed: SEED,
      trainDataset: TASKS,
      valDataset: Array.from({ length: EVAL_REPEATS }, () => TASKS).flat(),
    },
  };
  const cfg = validateRunConfig(input, 'engine-learning run config');
  const client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
  const started = Date.now();
  const run = await startOrAttach(client, taskQueue, cfg, { fresh: true });
  const handle = run.handle as WorkflowHandle<typeof trainingRun>;
  log(`rl: started ${run.workflowId}: ${RL_STEPS} steps of ${TASKS.length} tasks x ${GROUP} rollouts, lr ${RL_LR}, ${LOSS}, from ${statePath}`);
  let ended = false;
  let error: string | undefined;
  const result = handle.result().then(
    () => undefined,
    (err: Error) => {
      error = `the run failed: ${err.message}${err.cause ? `: ${(err.cause as Error).message}` : ''}`;
    },
  ).finally(() => {
    ended = true;
  });
  let reported = 0;
  const rowsNow = (): RlRow[] => {
    const byStep = new Map<number, RlRow>();
    for (const m of readJsonl(runPaths(logPath).metrics)) {
      if (typeof m.step !== 'number') continue;
      const n = (k: string) => (typeof m[k] === 'number' && Number.isFinite(m[k]) ? (m[k] as number) : null);
      const prev = byStep.get(m.step);
      byStep.set(m.step, {
        step: m.step,
        train: n('env/all/reward/total') ?? prev?.train ?? null,
        eval: n('test/env/all/reward/total') ?? prev?.eval ?? null,
        seconds: n('time/total') ?? prev?.seconds ?? null,
      });
    }
    return [...byStep.values()].sort((a, b) => a.step - b.step);
  };
  while (!ended) {
    const rows = rowsNow();
    for (const r of rows.slice(reported)) {
      if (r.train === null && r.step >= RL_STEPS) continue;
      log(`rl: step ${r.step} train reward ${f(r.train)} eval reward ${f(r.eval)} (${f(r.seconds, 1)} s)`);
      reported++;
    }
    await Promise.race([result, sleep(500)]);
  }
  return { rows: rowsNow(), seconds: (Date.now() - started) / 1000, error };
}

function commitOf(): string {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  return commit + (dirty ? ' (with uncommitted changes in the tree)' : '');
}

async function main(): Promise<void> {
  await waitForQuiet();
  const loadBefore = loadAverage();
  const commit = commitOf();
  const started = new Date();
  const dataDir = path.join(ROOT, '.data', 'bench', 'engine-learning');
  // Kept: the uv environment and the tiny model. Wiped: every database, so each run starts from nothing.
  for (const sub of ['store', 'proxy', 'runs', path.join('engines', 'skyrl-state')]) rmSync(path.join(dataDir, sub), { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const taskQueue = `engine-learning-${randomUUID()}`;
  log(`starting the stack (SkyRL jax, tiny Qwen3 as ${MODEL}) under ${dataDir}; load average ${loadBefore}`);
  const stack = await startStack({
    dataDir,
    ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 },
    taskQueue,
    engine: { name: 'skyrl', model: MODEL, tinyQwen3: true, backend: 'jax', maxLoraRank: LORA_RANK, maxLoraAdapters: 4 },
    initialModel: MODEL,
    renderer: RENDERER,
    agent: AGENT,
    runners: RUNNERS,
    echo: v.verbose,
    log: (l) => log(`stack: ${l}`),
    lockHolder: 'npm run bench -- engine-learning',
  });
  const stackSeconds = (Date.now() - started.getTime()) / 1000;
  let sft: Awaited<ReturnType<typeof supervised>> | undefined;
  let rl: Awaited<ReturnType<typeof reinforce>> | undefined;
  let sftSeconds = 0;
  try {
    const s0 = Date.now();
    sft = await supervised(stack);
    sftSeconds = (Date.now() - s0) / 1000;
    if (RL_STEPS > 0) rl = await reinforce(stack, taskQueue, dataDir, sft.statePath);
  } finally {
    await stack.stop();
  }
  const seconds = (Date.now() - started.getTime()) / 1000;
  const loadAfter = loadAverage();
  const text = report({ sft, rl, commit, started, seconds, stackSeconds, sftSeconds, loadBefore, loadAfter });
  say(text);
  if (v.out) {
    writeFileSync(path.resolve(v.out), `${text}\n`);
    log(`wrote ${v.out}`);
  }
  if (rl?.error) {
    log(rl.error);
    process.exit(1);
  }
}

function report(r: {
  sft: { rows: SftRow[]; statePath: string; sampled: { reward: number; answers: string[] } };
  rl?: { rows: RlRow[]; seconds: number; error?: string };
  commit: string;
  started: Date;
  seconds: number;
  stackSeconds: number;
  sftSeconds: number;
  loadBefore: string;
  loadAfter: string;
}): string {
  const args = process.argv.slice(2).filter((a, i, all) => a !== '--out' && all[i - 1] !== '--out');
  const command = `npm run bench -- engine-learning${args.length ? ` ${args.join(' ')}` : ''}`;
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const steps = (r.rl?.rows ?? []).filter((x) => x.train !== null);
  const evals = (r.rl?.rows ?? []).filter((x) => x.eval !== null);
  const sft = r.sft.rows;
  const lines = [
    '# Learning on a real architecture: the tiny Qwen3 on SkyRL',
    '',
    `Written by \`${command}\` (test/bench/engine-learning.ts) at commit ${r.commit}, ${r.started.toISOString()}, in ${(r.seconds / 60).toFixed(1)} min ` +
      `(stack start ${r.stackSeconds.toFixed(0)} s, SFT ${r.sftSeconds.toFixed(0)} s, RL ${f(r.rl?.seconds, 0)} s), on ${cpus().length} cores (${cpu}); ` +
      `load average (1, 5, 15 min) ${r.loadBefore} at the start, ${r.loadAfter} at the end.`,
    '',
    `The model: the tiny random-init Qwen3 (2 layers, hidden 64, Qwen3's tokenizer; engines/skyrl/make_tiny_qwen3.py, seed 0) served by ` +
      `SkyRL 0.4.0's Tinker-API server (JAX backend, CPU) as \`${MODEL}\`, LoRA rank ${LORA_RANK}, renderer \`${RENDERER}\` in both stages. ` +
      `Tasks: ${TASKS.join(', ')} (the same in SFT and RL); the agent: \`${AGENT}\` (${AGENT === 'hello' ? "helloReward: 1 for \"I am N\", -1 for \"not N\", else 0" : 'helloDenseReward: helloReward plus the share of "i am N"\'s characters the answer uses'}). Seed ${SEED}: ` +
      `the SFT adapter's init and example order, and the RL run's datasetBuilder.seed (adapter init, data order, every rollout's sampling seed).`,
    '',
    `**SFT** (the cookbook's supervised loop through the project's Tinker client): ${sft.length} steps of ${SFT_BATCH} rendered conversations ` +
      `(user: helloPrompt(N), assistant: "I am N"; weights on the assistant's tokens), \`cross_entropy\`, Adam lr ${SFT_LR} (constant), ` +
      `then \`save_state\`. Loss per assistant token ${f(sft[0]?.loss, 2)} -> ${f(sft.at(-1)?.loss, 2)}; on the number's token alone ` +
      `${f(sft[0]?.answerNll, 2)} -> ${f(sft.at(-1)?.answerNll, 2)} (ln ${TASKS.length} = ${Math.log(TASKS.length).toFixed(2)} would be a uniform guess among the ${TASKS.length} numbers). ` +
      `Sampled after SFT (temperature 1, ${EVAL_REPEATS} per task): reward ${f(r.sft.sampled.reward)}; e.g. ${r.sft.sampled.answers.slice(0, 4).join(', ')}.`,
    '',
    `**RL** (the durable loop: Temporal workflow, store, proxy, worker, ${RUNNERS} runners): started from the SFT state with ` +
      `\`loadCheckpointPath\` (weights only), ${RL_STEPS} steps of ${TASKS.length} tasks x ${GROUP} rollouts, \`${LOSS}\`, lr ${RL_LR}, ` +
      `maxTokens ${MAX_TOKENS}; eval every ${EVAL_EVERY} steps and after the last (${EVAL_REPEATS} rollouts per task, temperature 1).` +
      (steps.length
        ? ` Train reward ${f(steps[0]!.train)} at step 0 -> ${f(mean(steps.slice(-3).map((x) => x.train!)))} (mean of the last 3 steps); ` +
          `eval reward ${f(evals[0]?.eval)} -> ${f(evals.at(-1)?.eval)}.`
        : '') +
      (r.rl?.error ? ` **${r.rl.error}**` : ''),
    '',
    '| SFT step | loss / token | number-token NLL | s |',
    '|---:|---:|---:|---:|',
    ...sft.map((x) => `| ${x.step} | ${f(x.loss, 3)} | ${f(x.answerNll, 3)} | ${f(x.seconds, 1)} |`),
    '',
    '| RL step | train reward | eval reward | s |',
    '|---:|---:|---:|---:|',
    ...(r.rl?.rows ?? []).map((x) => `| ${x.train === null && x.step >= RL_STEPS ? `${x.step} (final eval)` : x.step} | ${f(x.train)} | ${f(x.eval)} | ${f(x.seconds, 1)} |`),
  ];
  const tail = steps.length
    ? `engine-learning: RL train reward ${f(steps[0]!.train)} -> ${f(mean(steps.slice(-3).map((x) => x.train!)))} over ${steps.length} steps, eval ${f(evals[0]?.eval)} -> ${f(evals.at(-1)?.eval)}; SFT loss ${f(sft[0]?.loss)} -> ${f(sft.at(-1)?.loss)}; ${(r.seconds / 60).toFixed(1)} min`
    : `engine-learning: SFT loss ${f(sft[0]?.loss)} -> ${f(sft.at(-1)?.loss)}, sampled reward ${f(r.sft.sampled.reward)}; no RL steps`;
  lines.push('', tail);
  return lines.join('\n');
}

main().catch((err: Error) => {
  process.stderr.write(`bench engine-learning: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
