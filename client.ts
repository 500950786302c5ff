// `npm run client -- <command>`: start, watch and steer training runs; each command prints the run's Temporal UI link.
// This file reads the command line and the Temporal settings, and runs the command cli/commands.ts names; a mistake
// is answered with one line (cli/mistakes.ts).
import type { Client } from '@temporalio/client';
import { SettingsError, temporalSettings, type TemporalSettings } from './common/temporal-settings';
import { runMain, UsageError } from './common/service-args';
import { checkClientCommandLine, parseClientArgs } from './cli/client-args';
import type { CommandContext } from './cli/command-context';
import { COMMANDS } from './cli/commands';
import { CommandError, explain, requireServer } from './cli/mistakes';
import { connectionProblem } from './cli/connection-problem';
import { connectClient, TemporalConnectError } from './cli/temporal-connect';
import { USAGE } from './cli/usage';

async function connect(s: TemporalSettings): Promise<Client> {
  await requireServer(s.address);
  try {
    return await connectClient(s);
  } catch (err) {
    throw new CommandError(err instanceof TemporalConnectError ? err.message : connectionProblem(err, s));
  }
}

/** What the command is about, for the one line a mistake is answered with. */
const context: CommandContext['about'] = { command: '', workflowId: undefined, address: '' };

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
  if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`client: unknown command ${JSON.stringify(command)} (npm run client -- --help lists the commands)`);
  await COMMANDS[command]!({ command, rest, values: parsed.values, settings, about: context, connect: () => connect(settings) });
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
