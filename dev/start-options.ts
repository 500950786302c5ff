// `npm start`'s command line: the options, their help text, and the checks that refuse a start before anything
// runs (each problem one line, naming what is missing).
import path from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../common/service-args';
import { recommendedRenderer, isRendererName, RENDERER_NAMES } from '../chat';
import { DEFAULT_BASE_URL } from '../tinker';
import { EXAMPLES } from './examples';

export const START_USAGE = `usage: npm start -- [options]

Starts a Temporal dev server, the store, the local trainer, the LLM proxy, the worker and runners of an example
agent, then trains the example (or follows its run when it is already going) and prints its reward curve.

options:
  --example NAME     the example to train: ${Object.keys(EXAMPLES).join(', ')} (default hello)
  --runners N        runners of the example agent (default 8); 0 starts none, for runners of your own
  --model NAME       the base model (default: the example's local model, e.g. local/tiny-hello)
  --renderer NAME    the chat renderer (default: the one recommended for the model)
  --hosted           train on hosted Tinker instead of the local trainer: needs TINKER_API_KEY and --model;
                     the service is TINKER_BASE_URL, else ${DEFAULT_BASE_URL}
  --keep-alive       keep everything running after the run ends (for the client, the Temporal CLI and the UI);
                     Ctrl-C stops it
  --fresh            forget the example's earlier run (its workflow and its files) and train from scratch
  --data DIR         where state is kept (default .data)
  --verbose          show every process's output
  --help             this text

ports (environment; 0 = any free port): TEMPORAL_PORT (7233), TEMPORAL_UI_PORT (8233), STORE_PORT (4747),
TRAINER_PORT (8110), PROXY_PORT (12306). TEMPORAL_ADDRESS: use a Temporal server that is already running.`;

export interface StartOptions {
  help: boolean;
  example: string;
  runners: number;
  model: string;
  renderer: string;
  /** Set with --hosted: the Tinker service everything trains and samples on (no local trainer). */
  hosted: { baseUrl: string } | null;
  keepAlive: boolean;
  fresh: boolean;
  verbose: boolean;
  dataDir: string;
  ports: { temporal: number; ui: number; store: number; trainer: number; proxy: number };
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
  const runners = Number(v.runners ?? 8);
  if (!Number.isInteger(runners) || runners < 0) throw new UsageError(`npm start: --runners must be a whole number of 0 or more, got ${JSON.stringify(v.runners)}`);

  const hosted = v.hosted === true;
  if (hosted && !v.help) {
    const missing = [
      ...(env.TINKER_API_KEY || env.TINKER_CREDENTIAL_CMD ? [] : ['TINKER_API_KEY is not set (the key from the Tinker console)']),
      ...(env.TINKER_API_KEY && !/^(tml-|eyJ)/.test(env.TINKER_API_KEY) ? ["TINKER_API_KEY does not start with 'tml-' (is it a Tinker key?)"] : []),
      ...(v.model ? [] : ['--model is not given (the hosted base model to train, e.g. --model Qwen/Qwen3-8B)']),
    ];
    if (missing.length) throw new UsageError(`npm start --hosted: ${missing.join('; ')}`);
  }
  const model = v.model ?? ex.model;
  if (!hosted && !model.startsWith('local/')) {
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
