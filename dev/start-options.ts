// `npm start`'s command line: the options, their help text, and the checks that refuse a start before anything
// runs (each problem one line, naming what is missing).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../common/service-args';
import { recommendedRenderer, isRendererName, RENDERER_NAMES } from '../chat';
import { DEFAULT_BASE_URL } from '../tinker';
import { EXAMPLES } from './examples';
import { SKYRL_BACKENDS, TINY_QWEN3_SERVED_AS, type SkyrlBackend } from '../engines/skyrl/provision';

/** The shorthand --model that makes a tiny random Qwen3 and serves it as Qwen/Qwen3-8B (a Qwen3 CPUs can train). */
export const TINY_QWEN3 = 'tiny-qwen3';
/** SkyRL's LoRA slots as npm start sizes them (jax): rank 8 (the example's), 4 adapters (3 live models). */
export const SKYRL_LORA = { maxLoraRank: 8, maxLoraAdapters: 4 } as const;

export const START_USAGE = `usage: npm start -- [options]

Starts a Temporal dev server, the store, the local trainer (or SkyRL: --engine), the LLM proxy, the worker and
runners of an example agent, then trains the example (or follows its run when it is already going) and prints its
reward curve.

options:
  --example NAME     the example to train: ${Object.keys(EXAMPLES).join(', ')} (default hello)
  --runners N        runners of the example agent (default 8); 0 starts none, for runners of your own
                     (ai-sdk: no runners; its agent runs as AI SDK workflows on the agent worker npm start supervises)
  --model NAME       the base model (default: the example's local model, e.g. local/tiny-hello)
  --renderer NAME    the chat renderer (default: the one recommended for the model)
  --hosted           train on hosted Tinker instead of the local trainer: needs TINKER_API_KEY and --model;
                     the service is TINKER_BASE_URL, else ${DEFAULT_BASE_URL}
  --engine skyrl     train on SkyRL's open Tinker-API server (PyPI skyrl==0.4.0), installed under
                     <data>/engines/ on first use (Python 3.12 and uv; about 6 GB) and supervised in the local
                     trainer's place on TRAINER_PORT; needs --model: a registry name (Qwen/Qwen3-8B; weights of
                     yours with --checkpoint-path), or ${TINY_QWEN3}: a tiny random Qwen3 made on this machine and served as
                     ${TINY_QWEN3_SERVED_AS} (what 2 CPU cores can train); LoRA rank up to ${SKYRL_LORA.maxLoraRank}
  --checkpoint-path DIR  with --engine: weights to serve under --model's name (no hub download)
  --backend NAME     with --engine: SkyRL's backend, ${SKYRL_BACKENDS.join(', ')} (default jax, which runs on CPU; fsdp
                     and megatron need a GPU machine and a uv project of yours in AGL_SKYRL_PROJECT)
  --gpu              with --engine skyrl --backend jax: JAX on the machine's NVIDIA GPUs (jax[cuda13], installed
                     beside the CPU environment on first use) instead of its CPUs
  --keep-alive       keep everything running after the run ends (for the client, the Temporal CLI and the UI);
                     Ctrl-C stops it
  --fresh            forget the example's earlier run (its workflow and its files) and train from scratch
  --data DIR         where state is kept (default .data)
  --verbose          show every process's output
  --help             this text

ports (environment; 0 = any free port): TEMPORAL_PORT (7233), TEMPORAL_UI_PORT (8233), STORE_PORT (4747),
TRAINER_PORT (8110), PROXY_PORT (12306). TEMPORAL_ADDRESS (or a Temporal CLI profile, TEMPORAL_PROFILE): use that
running server (one that does not answer stops npm start with the reason; its own dev server only when none is set).`;

export interface StartOptions {
  help: boolean;
  example: string;
  runners: number;
  model: string;
  renderer: string;
  /** Set with --hosted: the Tinker service everything trains and samples on (no local trainer). */
  hosted: { baseUrl: string } | null;
  /** Set with --engine: the engine the stack provisions and supervises instead of the local trainer. */
  engine: StartEngine | null;
  keepAlive: boolean;
  fresh: boolean;
  verbose: boolean;
  dataDir: string;
  ports: { temporal: number; ui: number; store: number; trainer: number; proxy: number };
}

export interface StartEngine {
  name: 'skyrl';
  backend: SkyrlBackend;
  /** Weights served under the model's name (null: the model's own, from the hub or its directory). */
  checkpointPath: string | null;
  /** --gpu: JAX on NVIDIA GPUs (the jax backend only). */
  gpu: boolean;
  /** --model tiny-qwen3: make the tiny Qwen3 and serve it (the model is then Qwen/Qwen3-8B). */
  tinyQwen3: boolean;
  maxLoraRank: number;
  maxLoraAdapters: number;
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`npm start: ${name} must be a port from 0 to 65535, got ${JSON.stringify(text)}`);
  return n;
}

/** Parses `npm start`'s arguments; throws a one-line UsageError for anything it cannot start with. */
export function parseStartOptions(argv: string[], env: NodeJS.ProcessEnv, root: string): StartOptions {
  let v;
  try {
    v = parseArgs({
      args: argv,
      options: {
        example: { type: 'string' },
        runners: { type: 'string' },
        model: { type: 'string' },
        renderer: { type: 'string' },
        hosted: { type: 'boolean' },
        engine: { type: 'string' },
        'checkpoint-path': { type: 'string' },
        backend: { type: 'string' },
        gpu: { type: 'boolean' },
        'keep-alive': { type: 'boolean' },
        fresh: { type: 'boolean' },
        data: { type: 'string' },
        verbose: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (err) {
    const m = /^Unknown option '([^']+)'/.exec((err as Error).message);
    if (m) throw new UsageError(`npm start: unknown option ${m[1]} (npm start -- --help lists the options)`);
    if (/Unexpected argument/.test((err as Error).message)) throw new UsageError(`npm start: options only, no positional arguments (npm start -- --help lists them)`);
    throw new UsageError(`npm start: ${(err as Error).message.split('\n')[0]}`);
  }
  const example = v.example ?? 'hello';
  const ex = EXAMPLES[example];
  if (!ex) throw new UsageError(`npm start: --example must be one of ${Object.keys(EXAMPLES).join(', ')}, got ${JSON.stringify(example)}`);
  if (ex.agentWorker && v.runners !== undefined) {
    throw new UsageError(`npm start: --example ${example} runs its agent as Temporal workflows on its own worker, not on runners: leave out --runners`);
  }
  const runners = Number(v.runners ?? 8);
  if (!Number.isInteger(runners) || runners < 0) throw new UsageError(`npm start: --runners must be a whole number of 0 or more, got ${JSON.stringify(v.runners)}`);

  const hosted = v.hosted === true;
  if (hosted && v.engine !== undefined) throw new UsageError('npm start: --engine and --hosted both name the service to train on: give one');
  if (hosted && !v.help) {
    const missing = [
      ...(env.TINKER_API_KEY || env.TINKER_CREDENTIAL_CMD ? [] : ['TINKER_API_KEY is not set (the key from the Tinker console)']),
      ...(env.TINKER_API_KEY && !/^(tml-|eyJ)/.test(env.TINKER_API_KEY) ? ["TINKER_API_KEY does not start with 'tml-' (is it a Tinker key?)"] : []),
      ...(v.model ? [] : ['--model is not given (the hosted base model to train, e.g. --model Qwen/Qwen3-8B)']),
    ];
    if (missing.length) throw new UsageError(`npm start --hosted: ${missing.join('; ')}`);
  }
  const engine = parseEngine(v, root);
  const model = engine?.tinyQwen3 ? TINY_QWEN3_SERVED_AS : (v.model ?? ex.model);
  if (!hosted && !engine && !model.startsWith('local/')) {
    throw new UsageError(`npm start: ${model} is not a model of the local trainer (its models are named local/...); add --hosted to train it on hosted Tinker`);
  }
  let renderer: string;
  try {
    renderer = v.renderer ?? (v.model ? recommendedRenderer(model) : ex.renderer);
  } catch (err) {
    throw new UsageError(`npm start: ${(err as Error).message}`);
  }
  if (!isRendererName(renderer)) throw new UsageError(`npm start: --renderer must be one of ${RENDERER_NAMES.join(', ')}, got ${JSON.stringify(renderer)}`);
  return {
    help: v.help === true,
    example,
    runners,
    model,
    renderer,
    hosted: hosted ? { baseUrl: (env.TINKER_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, '') } : null,
    engine,
    keepAlive: v['keep-alive'] === true,
    fresh: v.fresh === true,
    verbose: v.verbose === true,
    dataDir: path.resolve(root, v.data ?? '.data'),
    ports: {
      temporal: port(env, 'TEMPORAL_PORT', 7233),
      ui: port(env, 'TEMPORAL_UI_PORT', 8233),
      store: port(env, 'STORE_PORT', 4747),
      trainer: port(env, 'TRAINER_PORT', 8110),
      proxy: port(env, 'PROXY_PORT', 12306),
    },
  };
}

/** --engine, --checkpoint-path, --backend, --gpu: null without --engine; each mistake one line. */
function parseEngine(v: { engine?: string; model?: string; 'checkpoint-path'?: string; backend?: string; gpu?: boolean; help?: boolean }, root: string): StartEngine | null {
  if (v.engine === undefined) {
    const stray = [v['checkpoint-path'] !== undefined && '--checkpoint-path', v.backend !== undefined && '--backend', v.gpu !== undefined && '--gpu'].filter(Boolean);
    if (stray.length) throw new UsageError(`npm start: ${stray.join(' and ')} ${stray.length > 1 ? 'go' : 'goes'} with --engine skyrl`);
    return null;
  }
  if (v.engine !== 'skyrl') throw new UsageError(`npm start: --engine must be skyrl, got ${JSON.stringify(v.engine)}`);
  if (!v.model && !v.help) throw new UsageError(`npm start --engine skyrl: --model is not given (e.g. --model ${TINY_QWEN3}, a tiny Qwen3 that CPUs can train)`);
  const backend = (v.backend ?? 'jax') as SkyrlBackend;
  if (!SKYRL_BACKENDS.includes(backend)) throw new UsageError(`npm start: --backend must be one of ${SKYRL_BACKENDS.join(', ')}, got ${JSON.stringify(v.backend)}`);
  // fsdp and megatron run on GPUs anyway (through the uv project in AGL_SKYRL_PROJECT); --gpu picks JAX's CUDA build.
  if (v.gpu && backend !== 'jax') throw new UsageError(`npm start: --gpu is for --backend jax (${backend} runs on GPUs already, from the uv project in AGL_SKYRL_PROJECT)`);
  const tinyQwen3 = v.model === TINY_QWEN3;
  if (tinyQwen3 && v['checkpoint-path'] !== undefined) throw new UsageError(`npm start: --model ${TINY_QWEN3} makes its own weights; give --checkpoint-path with another --model`);
  // The registry name says which tokenizer, renderer and limits the run uses; a directory alone does not.
  if (v.model && !tinyQwen3 && (path.isAbsolute(v.model) || v.model.startsWith('.') || existsSync(path.resolve(root, v.model)))) {
    throw new UsageError(`npm start: --model ${v.model} is a directory; give the registry name its weights are of and the directory as --checkpoint-path (e.g. --model Qwen/Qwen3-8B --checkpoint-path ${v.model})`);
  }
  let checkpointPath: string | null = null;
  if (v['checkpoint-path'] !== undefined) {
    checkpointPath = path.resolve(root, v['checkpoint-path']);
    if (!existsSync(checkpointPath)) throw new UsageError(`npm start: --checkpoint-path ${checkpointPath} does not exist`);
  }
  return { name: 'skyrl', backend, gpu: v.gpu === true, checkpointPath, tinyQwen3, ...SKYRL_LORA };
}
