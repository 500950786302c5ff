// Everything a local training run needs, started and supervised from one place: the Temporal dev server, the
// store, the local trainer (or an engine of the project's own in its place: SkyRL's Tinker-API server), the proxy,
// the worker and a fleet of example runners. `npm start` uses it with the default ports; tests use it with free
// ports and a temporary data folder.
import path from 'node:path';
import { freePort } from '../common/ports';
import { ensureTemporal, type TemporalServer } from './temporal-server';
import { Supervised, type ServiceSpec } from './supervisor';
import { lockDataDir } from './data-dir-lock';
import { ensureTinyQwen3, provisionSkyrl, type SkyrlBackend } from '../engines/skyrl/provision';
import { skyrlService } from '../engines/skyrl/service';

const ROOT = path.resolve(__dirname, '..');
const LISTENING = /listening on (http:\/\/\S+)/;

/** A Tinker-API engine the stack provisions and supervises in the local trainer's place, on the trainer's port. */
export interface StackEngine {
  name: 'skyrl';
  /** The base model's name as served (Qwen/Qwen3-8B), or a local directory. */
  model: string;
  /** Weights to serve under `model`'s name; with `tinyQwen3`, the tiny Qwen3 the stack makes. */
  checkpointPath?: string;
  /** Make engines/skyrl/make_tiny_qwen3.py's model under <data>/engines/models/tiny-qwen3 and serve it. */
  tinyQwen3?: boolean;
  backend: SkyrlBackend;
  maxLoraRank: number;
  maxLoraAdapters: number;
}

export interface StackOptions {
  dataDir: string;
  /** Ports; 0 = a free one. Defaults: the services' own defaults. */
  ports?: { temporal?: number; ui?: number; store?: number; trainer?: number; proxy?: number };
  /** Reuse TEMPORAL_ADDRESS when a server answers there (npm start); tests always start their own. */
  reuseTemporal?: boolean;
  /** Keep Temporal's state in <dataDir>/temporal/dev.db (else in memory). */
  persistTemporal?: boolean;
  taskQueue: string;
  /** The model the proxy serves before any run switches it. */
  initialModel: string;
  renderer: string;
  agent: string;
  /** A Tinker service to use instead of starting the local trainer (hosted Tinker; its key from TINKER_API_KEY). */
  externalTrainerUrl?: string;
  /** An engine to provision and supervise instead of the local trainer (SkyRL); its state under <data>/engines/. */
  engine?: StackEngine;
  /** TypeScript runners of `agent`; 0 = none (bring your own, e.g. Python Agent-lightning runners). */
  runners: number;
  /** Echo every child's output (prefixed). */
  echo?: boolean;
  /** Extra environment for the worker (e.g. fault injection). */
  workerEnv?: NodeJS.ProcessEnv;
  /** Extra environment for the runners (e.g. fault injection). */
  runnerEnv?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** Who holds the data directory, named to a second stack that asks for it (dev/data-dir-lock.ts). */
  lockHolder?: string;
}

export interface Stack {
  /** The current Temporal server (replaced by restartTemporal). */
  temporal: TemporalServer;
  /** Kills the Temporal dev server (-9) and starts it again on the same port and db file (persistTemporal). */
  restartTemporal(): Promise<void>;
  storeUrl: string;
  trainerUrl: string;
  proxyUrl: string;
  proxyPort: number;
  services: Record<'store' | 'trainer' | 'proxy' | 'worker' | 'runners', Supervised>;
  stop(): Promise<void>;
}

const tsx = (file: string, args: string[]): Pick<ServiceSpec, 'command' | 'args' | 'cwd'> => ({
  command: process.execPath,
  args: ['--import', 'tsx', path.join(ROOT, file), ...args],
  cwd: ROOT,
});

/** Environment that makes envconfig connect in plain text to the address given, whatever profile the user has. */
const PLAIN_LOCAL_TEMPORAL = { TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: '', TEMPORAL_PROFILE: '' };

async function pick(port: number | undefined, fallback: number): Promise<number> {
  if (port === 0) return freePort();
  return port ?? fallback;
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  // Before anything opens a database under it: one stack per data directory.
  const unlock = await lockDataDir(opts.dataDir, opts.lockHolder ?? 'a stack');
  try {
    return await startLockedStack(opts, unlock);
  } catch (err) {
    await unlock();
    throw err;
  }
}

async function startLockedStack(opts: StackOptions, unlock: () => Promise<void>): Promise<Stack> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`[stack] ${l}\n`));
  if (opts.engine && opts.externalTrainerUrl) throw new Error('a stack takes an engine of its own or an external trainer, not both');
  // Before anything starts: a missing Python or a failed install is one line, with nothing to stop.
  const engineSpec = opts.engine ? await engineService(opts.engine, opts.dataDir, log) : undefined;
  const p = opts.ports ?? {};
  const [temporalPort, uiPort, storePort, trainerPort, proxyPort] = await Promise.all([
    pick(p.temporal, 7233),
    pick(p.ui, 8233),
    pick(p.store, 4747),
    pick(p.trainer, 8110),
    pick(p.proxy, 12306),
  ]);
  const temporalOpts = {
    port: temporalPort,
    uiPort,
    dbFile: opts.persistTemporal ? path.join(opts.dataDir, 'temporal', 'dev.db') : undefined,
  };
  let temporal = opts.reuseTemporal ? await ensureTemporal(temporalOpts) : await (await import('./temporal-server')).startDevServer(temporalOpts);

  const storeUrl = `http://127.0.0.1:${storePort}`;
  const trainerUrl = opts.externalTrainerUrl ?? `http://127.0.0.1:${trainerPort}`;
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: temporal.address, AGL_TASK_QUEUE: opts.taskQueue };
  // A plain server (one this stack started, or an earlier npm start's): the user's TLS and key settings are for another.
  if (!temporal.connection?.tls && !temporal.connection?.apiKey) Object.assign(env, PLAIN_LOCAL_TEMPORAL, { TEMPORAL_NAMESPACE: temporal.namespace });
  // The worker would take TINKER_BASE_URL over the run config's trainer: only the stack's own trainer counts here.
  if (opts.externalTrainerUrl) env.TINKER_BASE_URL = opts.externalTrainerUrl;
  else if (opts.engine) {
    env.TINKER_BASE_URL = trainerUrl;
    // SkyRL takes any key; the user's hosted key is not sent to it.
    Object.assign(env, { TINKER_API_KEY: 'tml-dummy', TINKER_CREDENTIAL_CMD: '' });
  } else delete env.TINKER_BASE_URL;
  const service = (name: string, spec: Omit<ServiceSpec, 'name'>) => new Supervised({ name, echo: opts.echo, readyTimeoutMs: 180_000, ...spec }, log);

  const services = {
    store: service('store', { ...tsx('store/main.ts', ['--port', String(storePort), '--data', path.join(opts.dataDir, 'store')]), env, readyLine: LISTENING }),
    trainer: engineSpec
      ? new Supervised({ ...engineSpec({ port: trainerPort, env }), echo: opts.echo }, log)
      : service('trainer', {
          ...tsx('trainer/main.ts', ['--port', String(trainerPort), '--data', path.join(opts.dataDir, 'trainer')]),
          env,
          readyLine: LISTENING,
        }),
    proxy: service('proxy', {
      // --data: the proxy keeps the last switched policy there, so a restarted proxy serves it again.
      ...tsx('proxy/main.ts', [
        '--port', String(proxyPort), '--store', storeUrl, '--trainer', trainerUrl, '--model', opts.initialModel, '--renderer', opts.renderer,
        '--data', path.join(opts.dataDir, 'proxy'),
      ]),
      env,
      readyLine: LISTENING,
    }),
    worker: service('worker', { ...tsx('worker.ts', []), env: { ...env, ...opts.workerEnv }, readyLine: /worker polling task queue/ }),
    runners: service('runners', {
      ...tsx('agents/examples/main.ts', ['--agent', opts.agent, '--runners', String(opts.runners), '--store', storeUrl]),
      env: { ...env, ...opts.runnerEnv },
      readyLine: /runners polling/,
    }),
  };
  const started: Supervised[] = [];
  const stopAll = async () => {
    for (const s of [...started].reverse()) await s.stop().catch(() => undefined);
    await temporal.stop();
    await unlock();
  };
  try {
    // The trainer builds its base model on first use, which can take a while; start it first.
    for (const name of ['store', 'trainer', 'proxy', 'worker', 'runners'] as const) {
      if (name === 'runners' && opts.runners === 0) continue;
      if (name === 'trainer' && opts.externalTrainerUrl) continue;
      log(`starting ${name === 'trainer' ? services.trainer.spec.name : name}`);
      started.push(await services[name].start());
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  let restarting: Promise<void> = Promise.resolve();
  const stack: Stack = {
    temporal,
    restartTemporal() {
      // One restart at a time: two at once would both start a server on the same port.
      restarting = restarting.then(async () => {
        if (!temporal.process || !temporalOpts.dbFile) throw new Error('restartTemporal needs a dev server this stack started with persistTemporal');
        temporal.process.kill9();
        await temporal.process.exited;
        temporal = await (await import('./temporal-server')).startDevServer(temporalOpts);
        stack.temporal = temporal;
      });
      const mine = restarting;
      restarting = restarting.catch(() => undefined);
      return mine;
    },
    storeUrl,
    trainerUrl,
    proxyUrl,
    proxyPort,
    services,
    stop: stopAll,
  };
  return stack;
}

/** Provisions the engine (once; then instant) and returns how to start it on a port. */
async function engineService(e: StackEngine, dataDir: string, log: (line: string) => void) {
  const project = await provisionSkyrl({ dataDir, log, backend: e.backend });
  const checkpointPath = e.tinyQwen3 ? await ensureTinyQwen3({ python: project.python, dataDir, log }) : e.checkpointPath;
  return ({ port, env }: { port: number; env: NodeJS.ProcessEnv }) =>
    skyrlService({ project, model: e.model, checkpointPath, backend: e.backend, port, dataDir, maxLoraRank: e.maxLoraRank, maxLoraAdapters: e.maxLoraAdapters, env });
}
