// `npm start`: the embedded default. Starts the Temporal dev server (state in .data/temporal/dev.db, UI on
// http://127.0.0.1:8233), the store, the local trainer, the proxy, the worker and runners of an example agent;
// starts (or, when it is already running, resumes watching) the example's training run; shows its progress;
// prints a summary and exits when the run ends. Processes that die are restarted and the run carries on.
//   npm start                 the hello example
//   npm start -- --example guess
//   npm start -- --runners 16
//   npm start -- --fresh      forget the example's earlier run (its workflow and files) and train from scratch
import { parseArgs } from 'node:util';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { runMain, UsageError } from '../common/service-args';
import { temporalSettings, workflowUiLink } from '../common/temporal-settings';
import { validateRunConfig } from '../config/load';
import { startOrAttach, watch, workflowIdFor } from '../cli/run-commands';
import { runNameOf } from '../config/run-config';
import { rmSync } from 'node:fs';
import { runPaths } from '../activities/run-files';
import { EXAMPLES } from './examples';
import { startStack } from './stack';
import { formatCurve, rewardCurve } from './summary';
import { reportPath } from '../report/write-report';

const ROOT = path.resolve(__dirname, '..');

runMain(async () => {
  let v;
  try {
    v = parseArgs({
      options: { example: { type: 'string' }, runners: { type: 'string' }, verbose: { type: 'boolean' }, fresh: { type: 'boolean' } },
      strict: true,
    }).values;
  } catch (err) {
    throw new UsageError(`npm start: ${(err as Error).message}`);
  }
  const name = v.example ?? 'hello';
  const example = EXAMPLES[name];
  if (!example) throw new UsageError(`npm start: --example must be one of ${Object.keys(EXAMPLES).join(', ')}`);
  const dataDir = path.join(ROOT, '.data');
  const settings = temporalSettings();
  const say = (line: string) => process.stdout.write(`${line}\n`);

  say(`agl-temporal: starting the ${name} example (state under ${dataDir})`);
  const stack = await startStack({
    dataDir,
    reuseTemporal: true,
    persistTemporal: true,
    taskQueue: settings.taskQueue,
    initialModel: example.model,
    renderer: example.renderer,
    agent: example.agent,
    runners: Number(v.runners ?? 8),
    echo: v.verbose === true,
    log: (l) => say(`[supervisor] ${l}`),
  });
  const shutdown = async (code: number) => {
    await stack.stop();
    process.exit(code);
  };
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.once('SIGINT', () => void shutdown(130));
  process.once('SIGTERM', () => void shutdown(143));

  const logPath = path.join(dataDir, 'runs', name);
  const cfg = validateRunConfig(example.config({ storeUrl: stack.storeUrl, trainerUrl: stack.trainerUrl, proxyPort: stack.proxyPort, logPath }));
  const ui = stack.temporal.uiUrl ?? settings.uiUrl;
  const connection = await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' });
  const client = new Client({ connection, namespace: settings.namespace });
  if (v.fresh) {
    say(`--fresh: replacing run ${workflowIdFor(runNameOf(cfg))} and removing ${logPath}`);
    rmSync(logPath, { recursive: true, force: true });
  }
  const run = await startOrAttach(client, settings.taskQueue, cfg, { fresh: v.fresh });
  const link = workflowUiLink({ ...settings, uiUrl: ui }, run.workflowId);
  say(`${run.started ? 'started' : 'resuming'} run ${run.workflowId}`);
  say(`Temporal UI: ${link}`);
  say(`metrics and checkpoints: ${runPaths(logPath).dir}`);
  say(`report (rewritten after every step): ${reportPath(logPath)}`);

  let result;
  try {
    result = await watch(run.handle);
  } catch (err) {
    say(`the run failed: ${(err as Error).message}`);
    await shutdown(1);
    return;
  }
  say('');
  say(formatCurve(rewardCurve(runPaths(logPath).metrics)));
  say(`${result.stoppedEarly ? 'stopped' : 'finished'} after ${result.batchesCompleted}/${result.numBatches} batches; final checkpoint ${result.finalCheckpoint ?? '-'}`);
  say(`files: ${runPaths(logPath).metrics}, ${runPaths(logPath).checkpoints}`);
  say(`report: ${reportPath(logPath)}`);
  say(`to train again from scratch: npm start -- --fresh${name === 'hello' ? '' : ` --example ${name}`}`);
  await shutdown(0);
});
