// What every client command gets from client.ts: the parsed command line, the Temporal settings, a connection made
// on demand, the run it names, and `about`, what the command is about for the one line a mistake is answered with
// (cli/mistakes.ts explain). One command is a function of this (cli/commands.ts lists them).
import type { Client } from '@temporalio/client';
import { ConfigError } from '../config/errors';
import { checkRunConfigFile } from './config-check';
import { workflowUiLink, type TemporalSettings } from '../common/temporal-settings';
import { UsageError } from '../common/service-args';
import type { parseClientArgs } from './client-args';
import { requireRunning, runHandle } from './run-commands';

export interface CommandContext {
  command: string;
  /** The words after the command. */
  rest: string[];
  values: ReturnType<typeof parseClientArgs>['values'];
  settings: TemporalSettings;
  /** What the command is about (set as soon as it is known), for the line a mistake is answered with. */
  about: { command: string; workflowId: string | undefined; address: string };
  connect(): Promise<Client>;
}

export type Command = (c: CommandContext) => Promise<void>;

/** The run name the command needs as its first argument. */
export function needRun(c: CommandContext): string {
  if (!c.rest[0]) throw new UsageError(`client ${c.command}: needs a run name, e.g. npm run client -- ${c.command} hello`);
  return c.rest[0];
}

/** The run the command is about, on a connected client; checked to be running, as the command steers it. */
export async function runningRun(c: CommandContext) {
  const name = needRun(c);
  const h = runHandle(await c.connect(), name);
  c.about.workflowId = h.workflowId;
  await requireRunning(h, c.command);
  return h;
}

/** Prints the Temporal UI link of a workflow. */
export function link(c: CommandContext, workflowId: string): void {
  process.stdout.write(`${workflowUiLink(c.settings, workflowId)}\n`);
}

/** Loads a run config; on problems prints every one with its field path and exits 2 before anything starts. */
export async function loadConfigOrExit(c: CommandContext, file: string | undefined, opts: { start?: boolean } = {}) {
  if (!file) throw new UsageError(`client ${c.command}: needs a run config file, e.g. agents/examples/hello.run.json`);
  try {
    // Also against the trainer it names (model served, credential); notes say what could not be checked.
    const { cfg, notes, warnings } = await checkRunConfigFile(file, process.env, opts);
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

/** Prints an update's reply, or the workflow's reason for refusing it (exit code 1). */
export function replyOrRefusal<T extends object>(command: string, r: T | { refused: string }, describe: (r: T) => string): void {
  if ('refused' in r) {
    process.stderr.write(`${command} refused: ${r.refused}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`${describe(r)}\n`);
  }
}
