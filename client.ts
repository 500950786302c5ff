// `npm run client -- <command>`: start, watch and steer training runs; each command prints the run's Temporal UI link.
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { ConfigError } from './config/errors';
import { loadRunConfigFile } from './config/load';
import { runNameOf } from './config/run-config';
import { temporalSettings, workflowUiLink, type TemporalSettings } from './common/temporal-settings';
import { runMain, UsageError } from './common/service-args';

const USAGE = `usage: npm run client -- <command> [args] [--address host:port] [--namespace ns] [--task-queue q]

commands:
  validate <run.json>    check a run config; every problem is printed with its field path (exit 2 on problems)
  start <run.json>       validate, then start the training run (workflow id agl-run-<runName>)
  ping                   run a health-check workflow on the worker`;

async function connect(s: TemporalSettings): Promise<Client> {
  const connection = await Connection.connect({ address: s.address, connectTimeout: '10 seconds' });
  return new Client({ connection, namespace: s.namespace });
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: { address: { type: 'string' }, namespace: { type: 'string' }, 'task-queue': { type: 'string' }, help: { type: 'boolean' } },
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

  switch (command) {
    case 'validate': {
      const cfg = loadConfigOrExit(rest[0]);
      process.stdout.write(`${rest[0]}: valid (run ${runNameOf(cfg)})\n`);
      return;
    }
    case 'start': {
      const cfg = loadConfigOrExit(rest[0]);
      const workflowId = `agl-run-${runNameOf(cfg)}`;
      const client = await connect(settings);
      await client.workflow.start('trainingRun', { taskQueue: settings.taskQueue, workflowId, args: [cfg] });
      process.stdout.write(`started ${workflowId}\n${workflowUiLink(settings, workflowId)}\n`);
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
      process.stdout.write(`${JSON.stringify(report)}\n${workflowUiLink(settings, workflowId)}\n`);
      return;
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
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
