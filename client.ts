// `npm run client -- <command>`: start, watch and steer training runs; each command prints the run's Temporal UI link.
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { ConfigError } from './config/errors';
import { checkRunConfigFile } from './cli/config-check';
import { runNameOf } from './config/run-config';
import { temporalSettings, workflowUiLink, type TemporalSettings } from './common/temporal-settings';
import { runMain, UsageError } from './common/service-args';
import { ping } from './cli/ping';
import { render } from './cli/render-command';
import { fetchTokenizerFiles } from './chat/tokenizer-files';
import { checkpoint, configure, parseAssignments, pause, requireRunning, resume, runHandle, startOrAttach, status, stop, watch } from './cli/run-commands';
import type { RunChanges } from './config/run-changes';
import { progressLine } from './cli/progress-format';
import { reportCommand } from './cli/report-command';
import { CommandError, explain, failureMessage, requireServer } from './cli/mistakes';
import { resultLine } from './cli/result-line';
import { DEFAULT_STOP_GRACE_SECONDS } from './workflows/stop-grace';

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
  stop <run> [reason]    finish the batch in flight, save a final checkpoint, end cleanly; what the run still
                         waits on after 5 minutes (a trainer that never answers, say) is cancelled
  list                   training runs known to Temporal
  report <run> [<run>..] write an HTML report with plots (one run: <logPath>/report.html; several overlaid:
                         --out FILE, default ./report-<a>-vs-<b>.html); <run> may also be a run directory
  ping                   run a health-check workflow on the worker
  render --model M [--renderer R] [--supervised [--train-on W]] [--text] FILE
                         FILE = {"messages": [...], "tools": [...]} (OpenAI chat format) rendered for model M as
                         one JSON line {"tokens": [...]} (with --supervised also "weights"; --text adds the
                         decoded pieces); no Temporal needed
  tokenizer fetch M      download model M's tokenizer files from the Hugging Face hub into the HF cache
                         (HF_HOME; HF_TOKEN if set), so render, validate and the proxy find them offline

<run> is a runName or a workflow id (agl-run-<runName>). Batches count from 0, as metrics.jsonl's step.
A mistake is answered with one line and exit code 1 (2 for a wrong command line or an invalid run config).`;

async function connect(s: TemporalSettings): Promise<Client> {
  await requireServer(s.address);
  const connection = await Connection.connect({ address: s.address, connectTimeout: '10 seconds' });
  return new Client({ connection, namespace: s.namespace });
}

/** What the command is about, for the one line a mistake is answered with. */
const context = { command: '', workflowId: undefined as string | undefined, address: '' };

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        address: { type: 'string' },
        namespace: { type: 'string' },
        'task-queue': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean' },
        model: { type: 'string' },
        renderer: { type: 'string' },
        supervised: { type: 'boolean' },
        'train-on': { type: 'string' },
        text: { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`client: ${(err as Error).message.split('.')[0]} (npm run client -- --help lists the commands and options)`);
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const settings = temporalSettings({ address: parsed.values.address, namespace: parsed.values.namespace, taskQueue: parsed.values['task-queue'] });
  context.command = command;
  context.address = settings.address;
  const needRun = () => {
    if (!rest[0]) throw new UsageError(`client ${command}: needs a run name, e.g. npm run client -- ${command} hello`);
    return rest[0];
  };
  /** The run the command is about, on a connected client; checked to be running when the command steers it. */
  const runningRun = async () => {
    const name = needRun();
    const h = runHandle(await connect(settings), name);
    context.workflowId = h.workflowId;
    await requireRunning(h, command);
    return h;
  };
  const namedRun = async () => {
    const name = needRun();
    const h = runHandle(await connect(settings), name);
    context.workflowId = h.workflowId;
    return h;
  };
  const link = (id: string) => process.stdout.write(`${workflowUiLink(settings, id)}\n`);

  switch (command) {
    case 'render': {
      if (!parsed.values.model || !rest[0]) throw new UsageError('client render: needs --model M and a FILE, e.g. npm run client -- render --model Qwen/Qwen3-8B chat.json');
      const { line, warning } = render({
        model: parsed.values.model,
        renderer: parsed.values.renderer,
        supervised: parsed.values.supervised,
        trainOnWhat: parsed.values['train-on'],
        text: parsed.values.text,
        file: rest[0],
      });
      if (warning) process.stderr.write(`warning: ${warning}\n`);
      process.stdout.write(`${JSON.stringify(line)}\n`);
      return;
    }
    case 'tokenizer': {
      if (rest[0] !== 'fetch' || !rest[1]) throw new UsageError('client tokenizer: usage: npm run client -- tokenizer fetch <org/Model>');
      process.stdout.write(`${await fetchTokenizerFiles(rest[1])}\n`);
      return;
    }
    case 'validate': {
      const cfg = await loadConfigOrExit(rest[0]);
      process.stdout.write(`${rest[0]}: valid (run ${runNameOf(cfg)})\n`);
      return;
    }
    case 'start': {
      const cfg = await loadConfigOrExit(rest[0]);
      const run = await startOrAttach(await connect(settings), settings.taskQueue, cfg);
      process.stdout.write(`${run.started ? 'started' : 'already running:'} ${run.workflowId}\n`);
      link(run.workflowId);
      return;
    }
    case 'status': {
      const h = await namedRun();
      const s = await status(h);
      if (s.progress) process.stdout.write(`${progressLine(s.progress)}\n`);
      else if (s.result) process.stdout.write(`${resultLine(s.result)}\n`);
      else {
        // A run that failed, was terminated or timed out: why, and a non-zero exit.
        process.stdout.write(`${s.ended ?? s.state}\n`);
        process.exitCode = 1;
      }
      link(h.workflowId);
      return;
    }
    case 'watch': {
      const h = await namedRun();
      link(h.workflowId);
      let result;
      try {
        result = await watch(h);
      } catch (err) {
        throw new CommandError(`run ${h.workflowId} failed: ${failureMessage(err)}`);
      }
      process.stdout.write(`${resultLine(result)}\n`);
      return;
    }
    case 'pause':
    case 'resume': {
      const h = await runningRun();
      await (command === 'pause' ? pause(h) : resume(h));
      process.stdout.write(`${command}d ${h.workflowId}\n`);
      link(h.workflowId);
      return;
    }
    case 'checkpoint': {
      const h = await runningRun();
      report('checkpoint', await checkpoint(h), (r) => `checkpoint ${r.name} (the policy after ${r.batch === 0 ? 'no batch yet' : `${r.batch} batches, 0 to ${r.batch - 1}`}): ${r.statePath}`);
      link(h.workflowId);
      return;
    }
    case 'configure': {
      let changes: Record<string, unknown>;
      try {
        changes = parseAssignments(rest.slice(1));
      } catch (err) {
        throw new UsageError(`client configure: ${(err as Error).message} (e.g. configure hello learningRate=0.001)`);
      }
      if (Object.keys(changes).length === 0) throw new UsageError('client configure: nothing to change (e.g. configure hello learningRate=0.001)');
      const h = await runningRun();
      report('configure', await configure(h, changes as RunChanges), (r) => `from batch ${r.appliesFromBatch}: ${JSON.stringify(r.changes)}`);
      link(h.workflowId);
      return;
    }
    case 'stop': {
      const h = await runningRun();
      process.stdout.write(`stopping ${h.workflowId} after the batch in flight (cut short after ${DEFAULT_STOP_GRACE_SECONDS / 60} minutes)...\n`);
      const r = await stop(h, rest.slice(1).join(' ') || 'stopped from the client');
      const last = r.stoppedAfterBatch > 0 ? `, the last batch ${r.stoppedAfterBatch - 1}` : '';
      process.stdout.write(`stopped after ${r.stoppedAfterBatch} batches${last}; final checkpoint ${r.finalCheckpoint ?? '(none)'}\n`);
      link(h.workflowId);
      return;
    }
    case 'list': {
      const client = await connect(settings);
      for await (const w of client.workflow.list({ query: `WorkflowType = "trainingRun"` })) {
        const sa = w.searchAttributes as Record<string, unknown[] | undefined>;
        // AglBatch is how many batches are done (batch N is the (N+1)th, as metrics.jsonl's step).
        const done = sa.AglBatch?.[0] ?? 0;
        const reward = sa.AglTrainReward?.[0];
        process.stdout.write(
          `${w.workflowId}\t${w.status.name}\t${done} batches done\treward ${typeof reward === 'number' ? reward.toFixed(3) : '-'}\t${workflowUiLink(settings, w.workflowId)}\n`,
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
      const report = await ping(await connect(settings), settings);
      process.stdout.write(`${JSON.stringify(report)}\n`);
      return;
    }
    default:
      throw new UsageError(`client: unknown command ${JSON.stringify(command)} (npm run client -- --help lists the commands)`);
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
async function loadConfigOrExit(file: string | undefined) {
  if (!file) throw new UsageError(`client ${context.command}: needs a run config file, e.g. agents/examples/hello.run.json`);
  try {
    // Also against the trainer it names (model served, credential); notes say what could not be checked.
    const { cfg, notes, warnings } = await checkRunConfigFile(file);
    for (const note of notes) process.stderr.write(`note: ${note}\n`);
    for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
    return cfg;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

runMain(async () => {
  try {
    await main();
  } catch (err) {
    if (err instanceof UsageError) throw err;
    process.stderr.write(`client ${context.command}: ${explain(err, context)}\n`);
    process.exit(1);
  }
});
