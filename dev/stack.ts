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
  /** JAX on NVIDIA GPUs (jax[cuda13]). */
  gpu?: boolean;
  maxLoraRank: number;
  maxLoraAdapters: number;
  /**
   * Where the engine's environment is installed and the tiny Qwen3 made (default: the data directory). Its database
   * and checkpoints stay under the data directory; tests share one install across their throwaway data directories.
   */
  installDir?: string;
}

export interface StackOptions {
  dataDir: string;
  /** Ports; 0 = a free one. Defaults: the services' own defaults. */
  ports?: { temporal?: number; ui?: number; store?: number; trainer?: number; proxy?: number };
  /** Use the configured server (TEMPORAL_ADDRESS, a profile; an error when it does not answer) or one on our port (npm start); tests always start their own. */
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
  /**
   * An agent's own Temporal worker to supervise beside the rest (the AI SDK example's, whose rollouts are agent
   * workflows: run config `agentWorkflow`): `script` run with --address, --namespace and --task-queue.
   */
  agentWorker?: { script: string; taskQueue: string };
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
  services: Record<'store' | 'trainer' | 'proxy' | 'worker' | 'runners', Supervised> & { agentWorker?: Supervised };
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
  let temporal = opts.reuseTemporal ? await ensureTemporal(temporalOpts, log) : await (await import('./temporal-server')).startDevServer(temporalOpts);

  // Ports picked free (0) can be taken between the pick and the bind (Temporal's dev server binds internal ports
  // of its own after the pick): a service that finds its port in use gets another one (portClash below).
  const ports = { store: storePort, trainer: trainerPort, proxy: proxyPort };
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: temporal.address, AGL_TASK_QUEUE: opts.taskQueue };
  // A plain server (one this stack started, or an earlier npm start's): the user's TLS and key settings are for another.
  if (!temporal.connection?.tls && !temporal.connection?.apiKey) Object.assign(env, PLAIN_LOCAL_TEMPORAL, { TEMPORAL_NAMESPACE: temporal.namespace });
  // The worker would take TINKER_BASE_URL over the run config's trainer: only the stack's own trainer counts here.
  const trainerUrl = () => opts.externalTrainerUrl ?? url(ports.trainer);
  const trainerEnv = (): NodeJS.ProcessEnv => {
    if (opts.externalTrainerUrl) return { TINKER_BASE_URL: opts.externalTrainerUrl };
    // SkyRL takes any key; the user's hosted key is not sent to it.
    if (opts.engine) return { TINKER_BASE_URL: trainerUrl(), TINKER_API_KEY: 'tml-dummy', TINKER_CREDENTIAL_CMD: '' };
    return { TINKER_BASE_URL: undefined };
  };
  const service = (name: string, spec: Omit<ServiceSpec, 'name'>) => new Supervised({ name, echo: opts.echo, readyTimeoutMs: 180_000, ...spec }, log);

  const make = {
    store: () => service('store', { ...tsx('gateway/main.ts', ['--port', String(ports.store), '--data', path.join(opts.dataDir, 'store')]), env, readyLine: LISTENING }),
    trainer: () =>
      engineSpec
        ? new Supervised({ ...engineSpec({ port: ports.trainer, env: { ...env, ...trainerEnv() } }), echo: opts.echo }, log)
        : service('trainer', {
            ...tsx('trainer/main.ts', ['--port', String(ports.trainer), '--data', path.join(opts.dataDir, 'trainer')]),
            env: { ...env, ...trainerEnv() },
            readyLine: LISTENING,
          }),
    proxy: () =>
      service('proxy', {
        // --data: the proxy keeps the last switched policy there, so a restarted proxy serves it again.
        ...tsx('proxy/main.ts', [
          '--port', String(ports.proxy), '--store', url(ports.store), '--trainer', trainerUrl(), '--model', opts.initialModel, '--renderer', opts.renderer,
          '--data', path.join(opts.dataDir, 'proxy'),
        ]),
        env: { ...env, ...trainerEnv() },
        readyLine: LISTENING,
      }),
    worker: () => service('worker', { ...tsx('worker.ts', []), env: { ...env, ...trainerEnv(), ...opts.workerEnv }, readyLine: /worker polling task queue/ }),
    runners: () =>
      service('runners', {
        ...tsx('agents/examples/main.ts', ['--agent', opts.agent, '--runners', String(opts.runners), '--store', url(ports.store)]),
        env: { ...env, ...trainerEnv(), ...opts.runnerEnv },
        readyLine: /runners polling/,
      }),
    agentWorker: () =>
      service('agent-worker', {
        ...tsx(opts.agentWorker!.script, ['--address', temporal.address, '--namespace', temporal.namespace, '--task-queue', opts.agentWorker!.taskQueue]),
        env: { ...env, ...trainerEnv() },
        readyLine: /agent worker polling task queue/,
      }),
  };
  const services = {} as Stack['services'];
  const started: Supervised[] = [];
  const stopAll = async () => {
    for (const s of [...started].reverse()) await s.stop().catch(() => undefined);
    await temporal.stop();
    await unlock();
  };
  try {
    // The trainer builds its base model on first use, which can take a while; start it first.
    for (const name of ['store', 'trainer', 'proxy', 'worker', 'runners', 'agentWorker'] as const) {
      if (name === 'runners' && opts.runners === 0) continue;
      if (name === 'agentWorker' && !opts.agentWorker) continue;
      if (name === 'trainer' && opts.externalTrainerUrl) continue;
      for (let attempt = 1; ; attempt++) {
        services[name] = make[name]();
        log(`starting ${services[name].spec.name}`);
        try {
          started.push(await services[name].start());
          break;
        } catch (err) {
          if (!(name in ports) || p[name as keyof typeof ports] !== 0 || !portClash(err) || attempt === 3) throw err;
          const port = name as keyof typeof ports;
          log(`${name}: port ${ports[port]} was taken meanwhile; trying another`);
          ports[port] = await freePort();
        }
      }
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  if (!services.trainer) services.trainer = make.trainer(); // an external trainer: never started, named for status
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
    storeUrl: url(ports.store),
    trainerUrl: trainerUrl(),
    proxyUrl: url(ports.proxy),
    proxyPort: ports.proxy,
    services,
    stop: stopAll,
  };
  return stack;
}

/** A service that could not bind its port: another process took it between the pick and the bind. */
function portClash(err: unknown): boolean {
  return /EADDRINUSE|address already in use/i.test((err as Error)?.message ?? '');
}

/** Provisions the engine (once; then instant) and returns how to start it on a port. */
async function engineService(e: StackEngine, dataDir: string, log: (line: string) => void) {
  const installDir = e.installDir ?? dataDir;
  const project = await provisionSkyrl({ dataDir: installDir, log, backend: e.backend, gpu: e.gpu });
  const checkpointPath = e.tinyQwen3 ? await ensureTinyQwen3({ python: project.python, dataDir: installDir, log }) : e.checkpointPath;
  return ({ port, env }: { port: number; env: NodeJS.ProcessEnv }) =>
    skyrlService({ project, model: e.model, checkpointPath, backend: e.backend, gpu: e.gpu, port, dataDir, maxLoraRank: e.maxLoraRank, maxLoraAdapters: e.maxLoraAdapters, env });
}
