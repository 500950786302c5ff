// `npm start`: the embedded default. Starts the Temporal dev server (state in .data/temporal/dev.db, UI on
// http://127.0.0.1:8233), the store, the local trainer (or, with --hosted, uses hosted Tinker; with --engine skyrl,
// installs and supervises SkyRL's Tinker-API server in its place), the proxy, the worker and runners of an example
// agent; starts (or, when it is already running, follows) the example's training run; shows its progress and what
// it waits for; prints a summary and exits when the run ends (--keep-alive: stays up until Ctrl-C). Processes that
// die are restarted and the run carries on. `npm start -- --help` lists the options (dev/start-options.ts). A
// mistake is answered with one line and a non-zero exit code.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { UsageError } from '../common/service-args';
import { temporalSettings, workflowUiLink } from '../common/temporal-settings';
import { validateRunConfig } from '../config/load';
import { ConfigError } from '../config/errors';
import { startOrAttach, watch, workflowIdFor } from '../cli/run-commands';
import { failureMessage } from '../cli/mistakes';
import { resultLine } from '../cli/result-line';
import { runNameOf, type RunConfig } from '../config/run-config';
import { runPaths } from '../records/run-files';
import { reportPath } from '../report/write-report';
import type { trainingRun } from '../workflows/training-run';
import { EXAMPLES, exampleConfig, type ExampleEngine } from './examples';
import { startStack, type Stack } from './stack';
import { formatCurve, rewardCurve } from './summary';
import { parseStartOptions, START_USAGE, TINY_QWEN3, type StartOptions } from './start-options';
import { requireFreePorts } from './preflight';
import { BaseBuildWatch, StartStatus } from './start-status';

const ROOT = path.resolve(__dirname, '..');
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Stops the stack and exits; once, whatever asks first (the end of the run, Ctrl-C, SIGTERM). */
function installShutdown(stack: Stack): (code: number) => Promise<void> {
  let stopping: Promise<void> | undefined;
  const shutdown = (code: number) => {
    stopping ??= stack.stop().finally(() => process.exit(code));
    return stopping;
  };
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.once('SIGINT', () => void shutdown(130));
  process.once('SIGTERM', () => void shutdown(143));
  return shutdown;
}

/** Starts the run, or follows it; says which, and whether it had already finished. */
async function startRun(client: Client, o: StartOptions, taskQueue: string, cfg: RunConfig): Promise<{ handle: WorkflowHandle<typeof trainingRun>; finished: boolean }> {
  const logPath = cfg.logPath;
  if (o.fresh) {
    say(`--fresh: replacing run ${workflowIdFor(runNameOf(cfg))} and removing ${logPath}`);
    rmSync(logPath, { recursive: true, force: true });
  }
  const run = await startOrAttach(client, taskQueue, cfg, { fresh: o.fresh });
  const state = run.started ? 'RUNNING' : (await run.handle.describe()).status.name;
  if (run.started) say(`started run ${run.workflowId}`);
  else if (state === 'RUNNING') say(`resuming run ${run.workflowId} (it was still going)`);
  else say(`run ${run.workflowId} has already finished (${state.toLowerCase()}); to train it again from scratch: npm start -- --fresh${o.example === 'hello' ? '' : ` --example ${o.example}`}`);
  return { handle: run.handle, finished: state !== 'RUNNING' };
}

async function main(o: StartOptions): Promise<void> {
  const settings = temporalSettings();
  const runsDir = path.join(o.dataDir, 'runs');
  const where = o.hosted
    ? `hosted Tinker at ${o.hosted.baseUrl}`
    : o.engine
      ? `SkyRL, ${o.engine.backend} backend${o.engine.gpu ? ' on GPUs' : ''}${o.engine.tinyQwen3 ? ', the tiny Qwen3 made on this machine' : o.engine.checkpointPath ? `, weights from ${o.engine.checkpointPath}` : ''}`
      : 'the local trainer';
  say(`agl-temporal: the ${o.example} example on ${o.model} (${where}); state under ${o.dataDir}`);
  const { trainer: trainerPort, ...otherPorts } = o.ports;
  await requireFreePorts({ store: otherPorts.store, proxy: otherPorts.proxy, ...(o.hosted ? {} : { trainer: trainerPort }) }, o.example);

  const stack = await startStack({
    dataDir: o.dataDir,
    ports: o.ports,
    reuseTemporal: true,
    persistTemporal: true,
    taskQueue: settings.taskQueue,
    initialModel: o.model,
    renderer: o.renderer,
    agent: EXAMPLES[o.example]!.agent,
    // An example whose agent runs as workflows (ai-sdk): its own worker, no runners.
    runners: EXAMPLES[o.example]!.agentWorker ? 0 : o.runners,
    agentWorker: EXAMPLES[o.example]!.agentWorker,
    externalTrainerUrl: o.hosted?.baseUrl,
    engine: o.engine
      ? {
          name: o.engine.name,
          model: o.model,
          checkpointPath: o.engine.checkpointPath ?? undefined,
          tinyQwen3: o.engine.tinyQwen3,
          backend: o.engine.backend,
          gpu: o.engine.gpu,
          maxLoraRank: o.engine.maxLoraRank,
          maxLoraAdapters: o.engine.maxLoraAdapters,
        }
      : undefined,
    echo: o.verbose,
    log: (l) => say(`[supervisor] ${l}`),
    lockHolder: `npm start --example ${o.example}`,
  });
  const shutdown = installShutdown(stack);
  say(`Temporal ${stack.temporal.address}, store ${stack.storeUrl}, LLM proxy ${stack.proxyUrl}, trainer ${stack.trainerUrl}`);
  const agentWorker = EXAMPLES[o.example]!.agentWorker;
  if (agentWorker) say(`agent worker ${agentWorker.script} polling task queue ${agentWorker.taskQueue}: each rollout is one of its agent workflows`);
  else if (o.runners === 0) say(`no runners started (--runners 0): start your own against the store ${stack.storeUrl}; the run waits for them`);

  const cfg = validateRunConfig(
    exampleConfig(o.example, { model: o.model, renderer: o.renderer, hosted: !!o.hosted, engine: engineChoice(o) }, { storeUrl: stack.storeUrl, trainerUrl: stack.trainerUrl, proxyPort: stack.proxyPort, runsDir }),
  );
  const logPath = cfg.logPath;
  const ui = stack.temporal.uiUrl ?? settings.uiUrl;
  const connection = await Connection.connect({ ...(stack.temporal.connection ?? { address: stack.temporal.address }), connectTimeout: '60 seconds' });
  const client = new Client({ connection, namespace: stack.temporal.namespace });
  const { handle, finished } = await startRun(client, o, settings.taskQueue, cfg);
  say(`Temporal UI: ${workflowUiLink({ namespace: stack.temporal.namespace, uiUrl: ui }, handle.workflowId)}`);
  say(`metrics and checkpoints: ${runPaths(logPath).dir}`);
  say(`report (rewritten after every step): ${reportPath(logPath)}`);

  const trainerOutput = () => stack.services.trainer.process?.output().slice(-65_536) ?? '';
  const status = new StartStatus({ storeUrl: stack.storeUrl, runnersStarted: o.runners, build: o.hosted || o.engine ? null : new BaseBuildWatch(trainerOutput), noRunners: !!agentWorker });
  let failed = false;
  try {
    const result = await watch(handle, process.stdout, 1000, (p) => status.for(p));
    say('');
    say(formatCurve(rewardCurve(runPaths(logPath).metrics), result.asyncCounts ? 'step' : 'batch'));
    say(finished ? `(finished earlier) ${resultLine(result)}` : resultLine(result));
    say(`files: ${runPaths(logPath).metrics}, ${runPaths(logPath).checkpoints}`);
    say(`report: ${reportPath(logPath)}`);
    if (!finished) say(`to train again from scratch: npm start -- --fresh${o.example === 'hello' ? '' : ` --example ${o.example}`}`);
  } catch (err) {
    say(`the run failed: ${failureMessage(err)}`);
    failed = true;
  }
  if (o.keepAlive) {
    const name = runNameOf(cfg);
    say(`--keep-alive: everything stays up (Temporal ${stack.temporal.address}, UI ${ui}); try npm run client -- status ${name}, or list; Ctrl-C stops it`);
    return; // the supervised processes keep the event loop alive until a signal
  }
  await shutdown(failed ? 1 : 0);
}

/** The example's engine settings for the run config (and its name), from --engine. */
function engineChoice(o: StartOptions): ExampleEngine | undefined {
  const e = o.engine;
  if (!e) return undefined;
  const label = e.tinyQwen3 ? TINY_QWEN3 : e.checkpointPath ? `${o.model}-${path.basename(e.checkpointPath)}` : o.model;
  return { name: e.name, backend: e.backend, maxLoraRank: e.maxLoraRank, label, tiny: e.tinyQwen3 };
}

/** Any error ends `npm start` with one line (the first of its message) and exit code 1; a usage mistake with 2. */
async function start(): Promise<void> {
  let o: StartOptions;
  try {
    o = parseStartOptions(process.argv.slice(2), process.env, ROOT);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  if (o.help) {
    say(START_USAGE);
    return;
  }
  try {
    await main(o);
  } catch (err) {
    const usage = err instanceof UsageError || err instanceof ConfigError;
    const line = err instanceof ConfigError ? err.message.replace(/\n\s*/g, ' ') : (err as Error).message.split('\n')[0];
    process.stderr.write(`${line.startsWith('npm start') ? '' : 'npm start: '}${line}${usage || o.verbose ? '' : ' (npm start -- --verbose shows every process\'s output)'}\n`);
    process.exit(usage ? 2 : 1);
  }
}

void start();
