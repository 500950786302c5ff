// `npm run bench -- engine-gpu`: the hello run on a real-size model on this machine's NVIDIA GPU, through the whole
// stack (Temporal, store, SkyRL's Tinker-API server with JAX on CUDA, proxy, worker, runners), as a user's
// `npm start -- --engine skyrl --gpu` runs it. The model: Qwen3-0.6B's published shape with random weights, made on
// the machine (engines/skyrl/make_tiny_qwen3.py qwen3-0.6b), because a GPU machine may not reach the hub; with
// --checkpoint-path, weights of your own (e.g. a downloaded Qwen/Qwen3-8B) served under --model's name (default
// Qwen/Qwen3-8B: the registry name whose tokenizer and renderer the Qwen3 family shares).
// Prints a markdown table: per step its seconds, rollouts, tokens sampled and trained, and the GPU's memory in use.
//
//   npm run bench -- engine-gpu [--steps 10] [--batch 8] [--group 8] [--max-tokens 64] [--lora-rank 32]
//                               [--model Qwen/Qwen3-8B] [--checkpoint-path DIR] [--out FILE] [--verbose]
//                               [--cpu --shape tiny]    (the same bench on CPUs, with the tiny Qwen3: a dry run)
//
// Without a GPU (no nvidia-smi answering) it says so in one line and exits 2: it never reports CPU figures as GPU
// ones. The uv environment (with jax[cuda13]), the model and the engine's state live under .data/bench/engine-gpu/.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { startStack } from '../../dev/stack';
import { validateRunConfig } from '../../config/load';
import { startOrAttach } from '../../cli/run-commands';
import { readJsonl, runPaths } from '../../records/run-files';
import { ensureTinyQwen3, provisionSkyrl } from '../../engines/skyrl/provision';

const ROOT = path.resolve(__dirname, '..', '..');

const { values: v } = parseArgs({
  options: {
    steps: { type: 'string', default: '10' },
    batch: { type: 'string', default: '8' },
    group: { type: 'string', default: '8' },
    'max-tokens': { type: 'string', default: '64' },
    'lora-rank': { type: 'string', default: '32' },
    model: { type: 'string', default: 'Qwen/Qwen3-8B' },
    'checkpoint-path': { type: 'string' },
    cpu: { type: 'boolean', default: false },
    shape: { type: 'string', default: 'qwen3-0.6b' },
    out: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
  strict: true,
});

function fail(line: string, code = 2): never {
  process.stderr.write(`bench engine-gpu: ${line}\n`);
  process.exit(code);
}
function int(name: keyof typeof v, min: number): number {
  const x = Number(v[name]);
  if (!Number.isInteger(x) || x < min) fail(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(v[name])}`);
  return x;
}
const STEPS = int('steps', 1);
const BATCH = int('batch', 1);
const GROUP = int('group', 2);
const MAX_TOKENS = int('max-tokens', 1);
const LORA_RANK = int('lora-rank', 1);
const SHAPE = String(v.shape);
if (SHAPE !== 'tiny' && SHAPE !== 'qwen3-0.6b') fail(`--shape must be tiny or qwen3-0.6b, got ${JSON.stringify(SHAPE)}`);
// The name the weights are served under: one the model registry and renderers know (Qwen3's tokenizer and template).
const MODEL = String(v.model);

const t0 = Date.now();
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const f = (x: number | null | undefined, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(d));

/** The GPUs nvidia-smi reports (name, total MiB), or null where none answers. */
function gpus(): { name: string; totalMiB: number }[] | null {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=name,memory.total', '--format=csv,noheader,nounits'], { encoding: 'utf8', timeout: 20_000 });
    const rows = out.trim().split('\n').filter(Boolean).map((l) => {
      const [name, total] = l.split(',').map((s) => s.trim());
      return { name: name!, totalMiB: Number(total) };
    });
    return rows.length ? rows : null;
  } catch {
    return null;
  }
}

function gpuMemoryUsedMiB(): number | null {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=memory.used', '--format=csv,noheader,nounits'], { encoding: 'utf8', timeout: 20_000 });
    return out.trim().split('\n').map(Number).reduce((a, b) => a + b, 0);
  } catch {
    return null;
  }
}

function commitOf(): string {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  return commit + (dirty ? ' (with uncommitted changes in the tree)' : '');
}

interface StepRow {
  step: number;
  seconds: number | null;
  sample: number | null;
  train: number | null;
  reward: number | null;
  sampledTokens: number | null;
  trainedTokens: number | null;
  gpuMiB: number | null;
}

async function main(): Promise<void> {
  const devices = v.cpu ? null : gpus();
  if (!v.cpu && !devices) fail('no NVIDIA GPU answers here (nvidia-smi found none); run it on a GPU machine, or --cpu --shape tiny for a dry run on CPUs');
  const commit = commitOf();
  const started = new Date();
  const dataDir = path.join(ROOT, '.data', 'bench', 'engine-gpu');
  for (const sub of ['store', 'proxy', 'runs', path.join('engines', 'skyrl-state')]) rmSync(path.join(dataDir, sub), { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const gpu = !v.cpu;
  const p0 = Date.now();
  const project = await provisionSkyrl({ dataDir, log, backend: 'jax', gpu });
  const provisionSeconds = (Date.now() - p0) / 1000;
  const checkpointPath = v['checkpoint-path']
    ? path.resolve(v['checkpoint-path'])
    : await ensureTinyQwen3({ python: project.python, dataDir, dir: path.join(dataDir, 'engines', 'models', SHAPE), shape: SHAPE as 'tiny' | 'qwen3-0.6b', log });
  const taskQueue = `engine-gpu-${randomUUID()}`;
  log(`starting the stack (SkyRL jax${gpu ? ' on CUDA' : ' on CPU'}, ${MODEL} from ${checkpointPath})`);
  const s0 = Date.now();
  const stack = await startStack({
    dataDir,
    ports: { temporal: 0, ui: 0, store: 0, trainer: 0, proxy: 0 },
    taskQueue,
    engine: { name: 'skyrl', model: MODEL, checkpointPath, backend: 'jax', gpu, maxLoraRank: LORA_RANK, maxLoraAdapters: 4 },
    initialModel: MODEL,
    renderer: 'qwen3_disable_thinking',
    agent: 'hello-dense',
    runners: 8,
    echo: v.verbose,
    log: (l) => log(`stack: ${l}`),
    lockHolder: 'npm run bench -- engine-gpu',
  });
  const stackSeconds = (Date.now() - s0) / 1000;
  const runName = `engine-gpu-${taskQueue.slice(-8)}`;
  const logPath = path.join(dataDir, 'runs', runName);
  const rows: StepRow[] = [];
  let error: string | undefined;
  let runSeconds = 0;
  try {
    const cfg = validateRunConfig(
      {
        runName,
        learningRate: 1e-4,
        modelName: MODEL,
        rendererName: 'qwen3_disable_thinking',
        baseUrl: stack.trainerUrl,
        storeAddress: stack.storeUrl,
        llmProxyPort: stack.proxyPort,
        logPath,
        engine: { name: 'skyrl', backend: 'jax', maxLoraRank: LORA_RANK },
        loraRank: LORA_RANK,
        maxTokens: MAX_TOKENS,
        concurrency: 64,
        evalEvery: 0,
        saveEvery: STEPS,
        rolloutTimeoutSeconds: 600,
        pauseAfterBatchesWithoutReward: 0,
        datasetBuilder: { batchSize: BATCH, groupSize: GROUP, seed: 0, trainDataset: Array.from({ length: BATCH * STEPS }, (_, i) => String(i + 1)), valDataset: ['1'] },
      },
      'engine-gpu run config',
    );
    const client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
    const r0 = Date.now();
    const run = await startOrAttach(client, taskQueue, cfg, { fresh: true });
    const memory = new Map<number, number | null>();
    let done = false;
    const result = run.handle.result().then(
      () => undefined,
      (err: Error) => {
        error = `the run failed: ${err.message}${err.cause ? `: ${(err.cause as Error).message}` : ''}`;
      },
    ).finally(() => (done = true));
    while (!done) {
      // The GPU's memory while each step runs (sampled; the peak seen during the step).
      const step = readJsonl(runPaths(logPath).metrics).length;
      const used = gpu ? gpuMemoryUsedMiB() : null;
      memory.set(step, Math.max(memory.get(step) ?? 0, used ?? 0) || null);
      await Promise.race([result, new Promise((r) => setTimeout(r, 1000))]);
    }
    runSeconds = (Date.now() - r0) / 1000;
    for (const m of readJsonl(runPaths(logPath).metrics)) {
      if (typeof m.step !== 'number') continue;
      const n = (k: string) => (typeof m[k] === 'number' && Number.isFinite(m[k]) ? (m[k] as number) : null);
      rows.push({
        step: m.step,
        seconds: n('time/total'),
        reward: n('env/all/reward/total'),
        sample: n('time/sample'),
        train: n('time/train'),
        sampledTokens: n('env/all/total_ac_tokens'),
        // Each episode's prompt and completion are one datum the engine runs forward and backward.
        trainedTokens: n('env/all/total_ac_tokens') !== null && n('env/all/total_ob_tokens') !== null ? n('env/all/total_ac_tokens')! + n('env/all/total_ob_tokens')! : null,
        gpuMiB: memory.get(m.step) ?? null,
      });
    }
  } finally {
    await stack.stop();
  }
  const args = process.argv.slice(2).filter((a, i, all) => a !== '--out' && all[i - 1] !== '--out');
  const command = `npm run bench -- engine-gpu${args.length ? ` ${args.join(' ')}` : ''}`;
  const device = devices ? devices.map((d) => `${d.name} (${d.totalMiB} MiB)`).join(', ') : `CPU only: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'})`;
  const timed = rows.filter((r) => r.seconds !== null).slice(1); // the first step carries JAX's first compiles
  const mean = timed.length ? timed.reduce((a, r) => a + r.seconds!, 0) / timed.length : NaN;
  const lines = [
    `# The hello run on ${gpu ? 'a GPU' : 'CPUs (dry run)'}: SkyRL JAX, ${SHAPE === 'tiny' ? 'the tiny Qwen3' : v['checkpoint-path'] ? `${MODEL} from ${v['checkpoint-path']}` : "Qwen3-0.6B's shape, random weights"}`,
    '',
    `Written by \`${command}\` (test/bench/engine-gpu.ts) at commit ${commit}, ${started.toISOString()}, on ${device}. ` +
      `Provisioning ${f(provisionSeconds, 0)} s, stack start ${f(stackSeconds, 0)} s, run ${f(runSeconds, 0)} s. ` +
      `${STEPS} steps of ${BATCH} tasks x ${GROUP} rollouts, maxTokens ${MAX_TOKENS}, LoRA rank ${LORA_RANK}, importance_sampling, lr 1e-4.` +
      (error ? ` **${error}**` : ''),
    '',
    '| step | s | sampling s | training s | train reward | tokens sampled | tokens trained | GPU MiB (peak seen) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.step} | ${f(r.seconds)} | ${f(r.sample)} | ${f(r.train)} | ${f(r.reward, 2)} | ${f(r.sampledTokens, 0)} | ${f(r.trainedTokens, 0)} | ${f(r.gpuMiB, 0)} |`),
    '',
    `engine-gpu: ${f(mean, 1)} s a step after the first (${timed.length} steps) on ${device}`,
  ];
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  if (v.out) writeFileSync(path.resolve(v.out), `${text}\n`);
  if (error) fail(error, 1);
}

main().catch((err: Error) => fail(err.stack ?? err.message, 1));
