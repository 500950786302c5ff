// `npm run client -- <command>`: start, watch and steer training runs; each command prints the run's Temporal UI link.
import { rmSync } from 'node:fs';
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ConfigError } from './config/errors';
import { checkRunConfigFile } from './cli/config-check';
import { runNameOf } from './config/run-config';
import { SettingsError, temporalSettings, workflowUiLink, type TemporalSettings } from './common/temporal-settings';
import { runMain, UsageError } from './common/service-args';
import { ping } from './cli/ping';
import { checkClientCommandLine, parseClientArgs } from './cli/client-args';
import { render } from './cli/render-command';
import { fetchTokenizerFiles } from './chat/tokenizer-files';
import { checkpoint, configure, parseAssignments, pause, requireRunning, resume, runHandle, startOrAttach, status, stop, watch, workflowIdFor } from './cli/run-commands';
import type { RunChanges } from './config/run-changes';
import { progressLine } from './cli/progress-format';
import { reportCommand } from './cli/report-command';
import { DEFAULT_STORE_URL, exportCommand } from './cli/export-command';
import { closeServices } from './activities/services';
import { CommandError, explain, failureMessage, requireServer } from './cli/mistakes';
import { resultLine } from './cli/result-line';
import { connectionProblem } from './cli/connection-problem';
import { registerSearchAttributes, describeProblem, checkSearchAttributes, cliCommand, REQUIRED_ATTRIBUTES } from './cli/search-attribute-setup';
import { runTrouble } from './cli/run-trouble';
import { forkConfig, parentOf, parseForkStep } from './cli/fork-command';
import { DEFAULT_STOP_GRACE_SECONDS } from './workflows/stop-grace';
import { startSweep, sweepInput, sweepState, sweepStatusLines } from './cli/sweep-command';
import { sweepWorkflowId } from './shared/sweep-plan';
import { diskText } from './shared/disk-text';
import { unitOf } from './workflows/batch-numbering';

const USAGE = `usage: npm run client -- <command> [args] [--address host:port] [--namespace ns] [--profile name] [--task-queue q]

commands:
  setup                  register the search attributes runs write (AglRunName, AglBatch...) on the namespace;
                         once per namespace (a server that does not allow it is answered with what to add where)
  validate <run.json>    check a run config; every problem is printed with its field path (exit 2 on problems)
  start <run.json>       validate, then start the run (workflow id agl-run-<runName>); attaches if it is running;
                         --fresh replaces a finished run of that name (and removes its logPath) to train it again
  fork <run> --from-step K [--name N] [--set key=value ...]
                         start a new run from <run>'s weights and optimizer state after step K, with its data
                         order and seeds from there on; --set changes fields of the config (e.g. learningRate=1e-4)
  sweep <run.json> --grid key=v1,v2 [--grid ...] [--seeds N] [--max-parallel N] [--early-stop S1,S2] [--name N]
                         train the config over the grid (x N seeds) as child runs <name>-c<i>-s<j> of one sweep
                         workflow (agl-sweep-<name>); at each --early-stop step the worse half (by the eval after
                         that step) stops with a final checkpoint; at most --max-parallel children train at once
  sweep-status <sweep>   the sweep's children (ranked best first once it is done) and its milestone decisions
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
                         --out FILE, default ./report-<a>-vs-<b>.html); <run> may also be a run directory, or a
                         sweep (agl-sweep-<name>): all its children, ranked best first
  export <run>           write the run's files (metrics.jsonl, checkpoints.jsonl, trace, config, report.html) from
                         the store into --dir D (default ./<runName>); again later, appends only what is new
                         (--store URL, default $AGL_STORE_URL or http://127.0.0.1:4747; AGL_STORE_TOKEN)
  ping                   run a health-check workflow on the worker
  render --model M [--renderer R] [--supervised [--train-on W]] [--text] FILE
                         FILE = {"messages": [...], "tools": [...]} (OpenAI chat format) rendered for model M as
                         one JSON line {"tokens": [...]} (with --supervised also "weights"; --text adds the
                         decoded pieces); no Temporal needed
  tokenizer fetch M      download model M's tokenizer files from the Hugging Face hub into the HF cache
                         (HF_HOME; HF_TOKEN if set), so render, validate and the proxy find them offline

<run> is a runName or a workflow id (agl-run-<runName>). Batches count from 0, as metrics.jsonl's step.
The server and how to reach it: Temporal's standard settings, as the Temporal CLI reads them (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_CLIENT_CERT_PATH..., TEMPORAL_PROFILE and its TOML file;
docs/connecting.md); --address, --namespace and --profile win over them.
A mistake is answered with one line and exit code 1 (2 for a wrong command line or an invalid run config).`;

async function connect(s: TemporalSettings): Promise<Client> {
  await requireServer(s.address);
  try {
    const connection = await Connection.connect({ ...s.connection, connectTimeout: '10 seconds' });
    // One call proves the TLS handshake and the credentials, so a wrong one is named here, not mid-command.
    await connection.workflowService.getSystemInfo({});
    return new Client({ connection, namespace: s.namespace });
  } catch (err) {
    throw new CommandError(connectionProblem(err, s));
  }
}

/** What the command is about, for the one line a mistake is answered with. */
const context = { command: '', workflowId: undefined as string | undefined, address: '' };

async function main(): Promise<void> {
  const parsed = parseClientArgs(process.argv.slice(2));
  const { command, rest } = parsed;
  if (parsed.values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  let settings: TemporalSettings;
  try {
    settings = temporalSettings({ address: parsed.values.address, namespace: parsed.values.namespace, taskQueue: parsed.values['task-queue'], profile: parsed.values.profile });
  } catch (err) {
    if (err instanceof SettingsError) throw new UsageError(`client: ${err.message}`);
    throw err;
  }
  context.command = command;
  context.address = settings.address;
  checkClientCommandLine(parsed);
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
    case 'setup': {
      const client = await connect(settings);
      let r;
      try {
        r = await registerSearchAttributes(client.connection.operatorService, settings.namespace);
      } catch (err) {
        throw new CommandError(setupRefused(err, settings));
      }
      const names = (l: typeof r.added) => l.map((a) => `${a.name} (${a.type})`).join(', ');
      if (r.added.length) process.stdout.write(`registered on namespace ${settings.namespace}: ${names(r.added)}\n`);
      if (r.alreadyThere.length) process.stdout.write(`already registered on namespace ${settings.namespace}: ${names(r.alreadyThere)}\n`);
      // The server registers them asynchronously: wait until it lists them, so a run started next can use them.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const check = await checkSearchAttributes(client.connection.operatorService, settings.namespace);
        if (!check.missing.length) break;
        if (Date.now() > deadline) throw new CommandError(`the server accepted the search attributes but still lacks ${check.missing.map((a) => a.name).join(', ')} after 30 s`);
        await new Promise((res) => setTimeout(res, 500));
      }
      process.stdout.write(`namespace ${settings.namespace} is ready for training runs\n`);
      return;
    }
    case 'start': {
      const cfg = await loadConfigOrExit(rest[0]);
      const client = await connect(settings);
      if (parsed.values.fresh) {
        process.stdout.write(`--fresh: replacing run ${workflowIdFor(runNameOf(cfg))} and removing ${cfg.logPath}\n`);
        rmSync(cfg.logPath, { recursive: true, force: true });
      }
      const run = await startOrAttach(client, settings.taskQueue, cfg, { fresh: parsed.values.fresh });
      context.workflowId = run.workflowId;
      if (!run.started) {
        const state = (await run.handle.describe()).status.name;
        if (state !== 'RUNNING') {
          link(run.workflowId);
          throw new CommandError(
            `run ${run.workflowId} has already finished (${state.toLowerCase().replace(/_/g, ' ')}); nothing started. To train it again from scratch: ` +
              `npm run client -- start ${rest[0]} --fresh (replaces it and removes ${cfg.logPath}), or give the config another runName`,
          );
        }
      }
      process.stdout.write(`${run.started ? 'started' : 'already running:'} ${run.workflowId}\n`);
      link(run.workflowId);
      const attrs = await checkSearchAttributes(client.connection.operatorService, settings.namespace).catch(() => null);
      const problem = attrs && describeProblem(attrs, settings.namespace, settings.address);
      if (problem) process.stderr.write(`WARNING: the run cannot go on until this is fixed: ${problem}\n`);
      return;
    }
    case 'fork': {
      const changes = parseAssignments(parsed.values.set ?? []); // checked by checkClientCommandLine
      const step = parseForkStep(parsed.values['from-step']);
      const client = await connect(settings);
      const parent = runHandle(client, needRun());
      context.workflowId = parent.workflowId;
      const { config, runKey } = await parentOf(parent);
      let cfg;
      try {
        cfg = forkConfig(config, runKey, step, parsed.values.name, changes);
      } catch (err) {
        if (err instanceof ConfigError) {
          process.stderr.write(`${err.message}\n`);
          process.exit(2);
        }
        throw err;
      }
      const run = await startOrAttach(client, settings.taskQueue, cfg);
      context.workflowId = run.workflowId;
      if (!run.started) throw new CommandError(`a run named ${runNameOf(cfg)} exists already (${run.workflowId}); give the fork another --name`);
      process.stdout.write(`started ${run.workflowId}: a fork of ${runKey} after step ${step}${Object.keys(changes).length ? ` with ${JSON.stringify(changes)}` : ''}\n`);
      link(run.workflowId);
      return;
    }
    case 'sweep': {
      const base = await loadConfigOrExit(rest[0]);
      const f = parsed.values;
      const input = sweepInput(base, { grid: f.grid, seeds: f.seeds, maxParallel: f['max-parallel'], earlyStop: f['early-stop'], name: f.name }, settings.taskQueue);
      const client = await connect(settings);
      context.workflowId = sweepWorkflowId(input.name);
      try {
        await startSweep(client, input);
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CommandError(`a sweep named ${input.name} exists already (${context.workflowId}); give another --name`);
        throw err;
      }
      const n = input.grid.reduce((k, [, v]) => k * v.length, 1);
      process.stdout.write(`started ${context.workflowId}: ${n} configs x ${input.seeds} seeds, at most ${input.maxParallel} at once${input.milestones.length ? `, halving at steps ${input.milestones.join(', ')}` : ''}\n`);
      link(context.workflowId);
      return;
    }
    case 'sweep-status': {
      if (!rest[0]) throw new UsageError('client sweep-status: needs a sweep name, e.g. npm run client -- sweep-status hello');
      const client = await connect(settings);
      context.workflowId = rest[0].startsWith('agl-sweep-') ? rest[0] : sweepWorkflowId(rest[0]);
      const { state, result } = await sweepState(client, rest[0]);
      for (const line of sweepStatusLines(state, result)) process.stdout.write(`${line}\n`);
      link(context.workflowId);
      return;
    }
    case 'status': {
      const client = await connect(settings);
      const h = runHandle(client, needRun());
      context.workflowId = h.workflowId;
      const trouble = () => runTrouble(h, troubleContext(client, settings));
      const s = await status(h, trouble);
      // A running run: where it is, and what holds it up (a run that cannot even answer: exit 1).
      if (s.state === 'RUNNING') {
        if (s.progress) process.stdout.write(`${progressLine(s.progress)}\n`);
        const disk = s.progress && diskText(s.progress.disk, unitOf(!!s.progress.async));
        if (disk) process.stdout.write(`${disk}\n`);
        for (const line of s.trouble ?? []) process.stdout.write(`${line}\n`);
        if (!s.progress) process.exitCode = 1;
      } else if (s.result) process.stdout.write(`${resultLine(s.result)}\n`);
      else {
        // A run that failed, was terminated or timed out: why, and a non-zero exit.
        process.stdout.write(`${s.ended ?? s.state}\n`);
        process.exitCode = 1;
      }
      link(h.workflowId);
      return;
    }
    case 'watch': {
      const client = await connect(settings);
      const h = runHandle(client, needRun());
      context.workflowId = h.workflowId;
      link(h.workflowId);
      let result;
      try {
        result = await watch(h, process.stdout, 1000, undefined, () => runTrouble(h, troubleContext(client, settings)));
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
      const changes = parseAssignments(rest.slice(1)); // checked by checkClientCommandLine
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
      const listed = [];
      for await (const w of client.workflow.list({ query: `WorkflowType = "trainingRun"` })) listed.push({ w, memo: ((await w.memo) ?? {}) as Record<string, unknown> });
      // Each running run's share of the runner fleet: its fleetWeight over all running runs' (store/fair-share.ts).
      const weightOf = (m: Record<string, unknown>) => (typeof m.fleetWeight === 'number' ? m.fleetWeight : 1);
      const totalWeight = listed.filter((l) => l.w.status.name === 'RUNNING').reduce((sum, l) => sum + weightOf(l.memo), 0);
      for (const { w, memo } of listed) {
        const sa = w.searchAttributes as Record<string, unknown[] | undefined>;
        // AglBatch is how many batches are done (batch N is the (N+1)th, as metrics.jsonl's step).
        const done = sa.AglBatch?.[0] ?? 0;
        const reward = sa.AglTrainReward?.[0];
        const parent = sa.AglParentRun?.[0];
        const lineage = typeof parent === 'string' ? `\tfork of ${parent} at step ${String(sa.AglForkStep?.[0] ?? '?')}` : '';
        const sweepOf = typeof sa.AglSweep?.[0] === 'string' ? `\tsweep ${sa.AglSweep[0]}` : '';
        const cap = typeof memo.maxRolloutsInFlight === 'number' ? `, at most ${memo.maxRolloutsInFlight} in flight` : '';
        const share = w.status.name === 'RUNNING' ? `\tfleet share ${((100 * weightOf(memo)) / totalWeight).toFixed(0)}% (weight ${weightOf(memo)}${cap})` : '';
        process.stdout.write(
          `${w.workflowId}\t${w.status.name}\t${done} batches done\treward ${typeof reward === 'number' ? reward.toFixed(3) : '-'}${share}${lineage}${sweepOf}\t${workflowUiLink(settings, w.workflowId)}\n`,
        );
      }
      return;
    }
    case 'report': {
      const file = await reportCommand(rest, parsed.values.out, settings, () => connect(settings));
      process.stdout.write(`report: ${file}\n`);
      return;
    }
    case 'export': {
      const dir = await exportCommand(rest[0], parsed.values.dir, parsed.values.store ?? process.env.AGL_STORE_URL ?? DEFAULT_STORE_URL);
      process.stdout.write(`exported to ${dir}\n`);
      await closeServices();
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

function troubleContext(client: Client, s: TemporalSettings) {
  return { client, operator: client.connection.operatorService, namespace: s.namespace, taskQueue: s.taskQueue, address: s.address };
}

/** Why `setup` could not register the attributes, with what to do where clients may not (Temporal Cloud). */
function setupRefused(err: unknown, s: TemporalSettings): string {
  const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  return (
    `could not register the search attributes on namespace ${s.namespace} (${why}). ` +
    `On Temporal Cloud, add them under the namespace's Custom Search Attributes in the Cloud console: ` +
    `${REQUIRED_ATTRIBUTES.map((a) => `${a.name} (${a.type})`).join(', ')}; on a server you run: ${cliCommand(s.namespace, REQUIRED_ATTRIBUTES, s.address)}`
  );
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
