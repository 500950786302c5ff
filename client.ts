// `npm run client -- <command>`: start, watch and steer training runs; each command prints the run's Temporal UI link.
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { ConfigError } from './config/errors';
import { loadRunConfigFile } from './config/load';
import { runNameOf } from './config/run-config';
import { temporalSettings, workflowUiLink, type TemporalSettings } from './common/temporal-settings';
import { runMain, UsageError } from './common/service-args';
import { checkpoint, configure, parseAssignments, pause, resume, runHandle, startOrAttach, status, stop, watch } from './cli/run-commands';
import type { RunChanges } from './config/run-changes';
import { progressLine } from './cli/progress-format';
import { reportCommand } from './cli/report-command';

const USAGE = `usage: npm run client -- <command> [args] [--address host:port] [--namespace ns] [--task-queue q]

commands:
  validate <run.json>    check a run config; every problem is printed with its field path (exit 2 on problems)
  start <run.json>       validate, then start the run (workflow id agl-run-<runName>); attaches if it is running
  status <run>           where the run is (batch, phase, last rewards) or how it ended
  watch <run>            follow the run live until it ends
  pause <run>            hold the run before its next batch
  resume <run>           let a paused run go on
  checkpoint <run>       record a checkpoint of the latest trained policy now (a checkpoints.jsonl row)
  configure <run> k=v..  change learningRate, evalEvery, saveEvery, trainTemperature or evalTemperature
                         from the next batch on (e.g. configure hello learningRate=0.001 evalEvery=10)
  stop <run> [reason]    finish the batch in flight, save a final checkpoint, end cleanly
  list                   training runs known to Temporal
  report <run> [<run>..] write an HTML report with plots (one run: <logPath>/report.html; several overlaid:
                         --out FILE, default ./report-<a>-vs-<b>.html); <run> may also be a run directory
  ping                   run a health-check workflow on the worker

<run> is a runName or a workflow id (agl-run-<runName>).`;

async function connect(s: TemporalSettings): Promise<Client> {
  const connection = await Connection.connect({ address: s.address, connectTimeout: '10 seconds' });
  return new Client({ connection, namespace: s.namespace });
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: { address: { type: 'string' }, namespace: { type: 'string' }, 'task-queue': { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const settings = temporalSettings({ address: parsed.values.address, namespace: parsed.values.namespace, taskQueue: parsed.values['task-queue'] });
  const needRun = () => {
    if (!rest[0]) throw new UsageError(`${command} needs a run name\n${USAGE}`);
    return rest[0];
  };
  const link = (id: string) => process.stdout.write(`${workflowUiLink(settings, id)}\n`);

  switch (command) {
    case 'validate': {
      const cfg = loadConfigOrExit(rest[0]);
      process.stdout.write(`${rest[0]}: valid (run ${runNameOf(cfg)})\n`);
      return;
    }
    case 'start': {
      const cfg = loadConfigOrExit(rest[0]);
      const run = await startOrAttach(await connect(settings), settings.taskQueue, cfg);
      process.stdout.write(`${run.started ? 'started' : 'already running:'} ${run.workflowId}\n`);
      link(run.workflowId);
      return;
    }
    case 'status': {
      const h = runHandle(await connect(settings), needRun());
      const s = await status(h);
      if (s.progress) process.stdout.write(`${progressLine(s.progress)}\n`);
      else if (s.result) process.stdout.write(`${s.state}: ${JSON.stringify(s.result)}\n`);
      else process.stdout.write(`${s.state}\n`);
      link(h.workflowId);
      return;
    }
    case 'watch': {
      const h = runHandle(await connect(settings), needRun());
      link(h.workflowId);
      const result = await watch(h);
      process.stdout.write(`${result.stoppedEarly ? 'stopped' : 'finished'} after ${result.batchesCompleted}/${result.numBatches} batches\n`);
      return;
    }
    case 'pause':
    case 'resume': {
      const h = runHandle(await connect(settings), needRun());
      await (command === 'pause' ? pause(h) : resume(h));
      process.stdout.write(`${command}d ${h.workflowId}\n`);
      link(h.workflowId);
      return;
    }
    case 'checkpoint': {
      const h = runHandle(await connect(settings), needRun());
      report('checkpoint', await checkpoint(h), (r) => `checkpoint ${r.name} (after ${r.batch} batches): ${r.statePath}`);
      link(h.workflowId);
      return;
    }
    case 'configure': {
      const h = runHandle(await connect(settings), needRun());
      let changes: Record<string, unknown>;
      try {
        changes = parseAssignments(rest.slice(1));
      } catch (err) {
        throw new UsageError(`configure: ${(err as Error).message}\n${USAGE}`);
      }
      report('configure', await configure(h, changes as RunChanges), (r) => `from batch ${r.appliesFromBatch}: ${JSON.stringify(r.changes)}`);
      link(h.workflowId);
      return;
    }
    case 'stop': {
      const h = runHandle(await connect(settings), needRun());
      process.stdout.write(`stopping ${h.workflowId} after the batch in flight...\n`);
      const r = await stop(h, rest.slice(1).join(' ') || 'stopped from the client');
      process.stdout.write(`stopped after batch ${r.stoppedAfterBatch}; final checkpoint ${r.finalCheckpoint ?? '(none)'}\n`);
      link(h.workflowId);
      return;
    }
    case 'list': {
      const client = await connect(settings);
      for await (const w of client.workflow.list({ query: `WorkflowType = "trainingRun"` })) {
        const sa = w.searchAttributes as Record<string, unknown[] | undefined>;
        const batch = sa.AglBatch?.[0] ?? '-';
        const reward = sa.AglTrainReward?.[0];
        process.stdout.write(
          `${w.workflowId}\t${w.status.name}\tbatch ${batch}\treward ${typeof reward === 'number' ? reward.toFixed(3) : '-'}\t${workflowUiLink(settings, w.workflowId)}\n`,
        );
      }
      return;
    }
    case 'report': {
      const file = await reportCommand(rest, parsed.values.out, settings, () => connect(settings));
      process.stdout.write(`report: ${file}\n`);
      return;
    }
    case 'ping': {
      const client = await connect(settings);
      const workflowId = `agl-ping-${randomUUID()}`;
      const report = await client.workflow.execute('healthCheck', {
        taskQueue: settings.taskQueue,
        workflowId,
        args: ['ping'],
        workflowExecutionTimeout: '60 seconds',
      });
      process.stdout.write(`${JSON.stringify(report)}\n`);
      link(workflowId);
      return;
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  }
}

/** Prints an update's reply, or the workflow's reason for refusing it (exit code 1). */
function report<T extends object>(command: string, r: T | { refused: string }, describe: (r: T) => string): void {
  if ('refused' in r) {
    process.stderr.write(`${command} refused: ${r.refused}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`${describe(r)}\n`);
  }
}

/** Loads a run config; on problems prints every one with its field path and exits 2 before anything starts. */
function loadConfigOrExit(file: string | undefined) {
  if (!file) throw new UsageError(`a run config file is required\n${USAGE}`);
  try {
    return loadRunConfigFile(file);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

runMain(main);
