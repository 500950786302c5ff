// The client commands that steer a running run through its signals and updates: pause, resume, checkpoint,
// configure, stop. Each checks first that the run is running (cli/command-context.ts runningRun).
import type { RunChanges } from '../config/run-changes';
import { DEFAULT_STOP_GRACE_SECONDS } from '../workflows/stop-grace';
import { link, replyOrRefusal, runningRun, type CommandContext } from './command-context';
import { checkpoint, configure, parseAssignments, pause, resume, stop } from './run-commands';

/** pause and resume. */
export async function pauseOrResumeCommand(c: CommandContext): Promise<void> {
  const h = await runningRun(c);
  await (c.command === 'pause' ? pause(h) : resume(h));
  process.stdout.write(`${c.command}d ${h.workflowId}\n`);
  link(c, h.workflowId);
}

export async function checkpointCommand(c: CommandContext): Promise<void> {
  const h = await runningRun(c);
  replyOrRefusal('checkpoint', await checkpoint(h), (r) => `checkpoint ${r.name} (the policy after ${r.batch === 0 ? 'no batch yet' : `${r.batch} batches, 0 to ${r.batch - 1}`}): ${r.statePath}`);
  link(c, h.workflowId);
}

export async function configureCommand(c: CommandContext): Promise<void> {
  const changes = parseAssignments(c.rest.slice(1)); // checked by checkClientCommandLine
  const h = await runningRun(c);
  replyOrRefusal('configure', await configure(h, changes as RunChanges), (r) => `from batch ${r.appliesFromBatch}: ${JSON.stringify(r.changes)}`);
  link(c, h.workflowId);
}

export async function stopCommand(c: CommandContext): Promise<void> {
  const h = await runningRun(c);
  process.stdout.write(`stopping ${h.workflowId} after the batch in flight (cut short after ${DEFAULT_STOP_GRACE_SECONDS / 60} minutes)...\n`);
  const r = await stop(h, c.rest.slice(1).join(' ') || 'stopped from the client');
  const last = r.stoppedAfterBatch > 0 ? `, the last batch ${r.stoppedAfterBatch - 1}` : '';
  process.stdout.write(`stopped after ${r.stoppedAfterBatch} batches${last}; final checkpoint ${r.finalCheckpoint ?? '(none)'}\n`);
  link(c, h.workflowId);
}
