// The client commands that start workflows: a run (start), a fork of one, a sweep; and a sweep's status.
import { rmSync } from 'node:fs';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { UsageError } from '../common/service-args';
import { ConfigError } from '../config/errors';
import { runNameOf } from '../config/run-config';
import { closeServices } from '../activities/services';
import { sweepWorkflowId } from '../shared/sweep-plan';
import { link, loadConfigOrExit, needRun, type CommandContext } from './command-context';
import { checkForkStart, forkConfig, parentOf, parseForkStep } from './fork-command';
import { CommandError } from './mistakes';
import { parseAssignments, runHandle, startOrAttach, workflowIdFor } from './run-commands';
import { checkSearchAttributes, describeProblem } from './search-attribute-setup';
import { startSweep, sweepInput, sweepState, sweepStatusLines } from './sweep-command';

export async function startCommand(c: CommandContext): Promise<void> {
  const { rest, values, settings } = c;
  const cfg = await loadConfigOrExit(c, rest[0], { start: true });
  const client = await c.connect();
  if (values.fresh) {
    process.stdout.write(`--fresh: replacing run ${workflowIdFor(runNameOf(cfg))} and removing ${cfg.logPath}\n`);
    rmSync(cfg.logPath, { recursive: true, force: true });
  }
  const run = await startOrAttach(client, settings.taskQueue, cfg, { fresh: values.fresh });
  c.about.workflowId = run.workflowId;
  if (!run.started) {
    const state = (await run.handle.describe()).status.name;
    if (state !== 'RUNNING') {
      link(c, run.workflowId);
      throw new CommandError(
        `run ${run.workflowId} has already finished (${state.toLowerCase().replace(/_/g, ' ')}); nothing started. To train it again from scratch: ` +
          `npm run client -- start ${rest[0]} --fresh (replaces it and removes ${cfg.logPath}), or give the config another runName`,
      );
    }
  }
  process.stdout.write(`${run.started ? 'started' : 'already running:'} ${run.workflowId}\n`);
  link(c, run.workflowId);
  const attrs = await checkSearchAttributes(client.connection.operatorService, settings.namespace).catch(() => null);
  const problem = attrs && describeProblem(attrs, settings.namespace, settings.address);
  if (problem) process.stderr.write(`WARNING: the run cannot go on until this is fixed: ${problem}\n`);
}

export async function forkCommand(c: CommandContext): Promise<void> {
  const { values, settings } = c;
  const changes = parseAssignments(values.set ?? []); // checked by checkClientCommandLine
  const step = parseForkStep(values['from-step']);
  const client = await c.connect();
  const parent = runHandle(client, needRun(c));
  c.about.workflowId = parent.workflowId;
  const { config, runKey } = await parentOf(parent);
  let cfg;
  try {
    cfg = forkConfig(config, runKey, step, values.name, changes);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // What the fork's workflow would fail on at once is refused here, with the reason, before it starts.
  for (const note of await checkForkStart(parent, cfg)) process.stderr.write(`note: ${note}\n`);
  await closeServices();
  const run = await startOrAttach(client, settings.taskQueue, cfg);
  c.about.workflowId = run.workflowId;
  if (!run.started) throw new CommandError(`a run named ${runNameOf(cfg)} exists already (${run.workflowId}); give the fork another --name`);
  process.stdout.write(`started ${run.workflowId}: a fork of ${runKey} after step ${step}${Object.keys(changes).length ? ` with ${JSON.stringify(changes)}` : ''}\n`);
  link(c, run.workflowId);
}

export async function sweepCommand(c: CommandContext): Promise<void> {
  const base = await loadConfigOrExit(c, c.rest[0]);
  const f = c.values;
  const input = sweepInput(base, { grid: f.grid, seeds: f.seeds, maxParallel: f['max-parallel'], earlyStop: f['early-stop'], name: f.name }, c.settings.taskQueue);
  const client = await c.connect();
  const workflowId = sweepWorkflowId(input.name);
  c.about.workflowId = workflowId;
  try {
    await startSweep(client, input);
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new CommandError(`a sweep named ${input.name} exists already (${workflowId}); give another --name`);
    throw err;
  }
  const n = input.grid.reduce((k, [, v]) => k * v.length, 1);
  process.stdout.write(`started ${workflowId}: ${n} configs x ${input.seeds} seeds, at most ${input.maxParallel} at once${input.milestones.length ? `, halving at steps ${input.milestones.join(', ')}` : ''}\n`);
  link(c, workflowId);
}

export async function sweepStatusCommand(c: CommandContext): Promise<void> {
  const name = c.rest[0];
  if (!name) throw new UsageError('client sweep-status: needs a sweep name, e.g. npm run client -- sweep-status hello');
  const client = await c.connect();
  const workflowId = name.startsWith('agl-sweep-') ? name : sweepWorkflowId(name);
  c.about.workflowId = workflowId;
  const { state, result } = await sweepState(client, name);
  for (const line of sweepStatusLines(state, result)) process.stdout.write(`${line}\n`);
  link(c, workflowId);
}
