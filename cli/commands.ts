// The client's commands by name: client.ts looks the command up here and runs it. The usage text (client.ts USAGE)
// lists them for people; test/cli/commands.test.ts checks the two agree.
import type { Command } from './command-context';
import { exportCommand, listCommand, pingCommand, reportCommand, statusCommand, watchCommand } from './inspect-commands';
import { renderCommand, tokenizerCommand, validateCommand } from './offline-commands';
import { setupCommand } from './setup-command';
import { forkCommand, startCommand, sweepCommand, sweepStatusCommand } from './start-commands';
import { checkpointCommand, configureCommand, pauseOrResumeCommand, stopCommand } from './steer-commands';

export const COMMANDS: Readonly<Record<string, Command>> = {
  render: renderCommand,
  tokenizer: tokenizerCommand,
  validate: validateCommand,
  setup: setupCommand,
  start: startCommand,
  fork: forkCommand,
  sweep: sweepCommand,
  'sweep-status': sweepStatusCommand,
  status: statusCommand,
  watch: watchCommand,
  pause: pauseOrResumeCommand,
  resume: pauseOrResumeCommand,
  checkpoint: checkpointCommand,
  configure: configureCommand,
  stop: stopCommand,
  list: listCommand,
  report: reportCommand,
  export: exportCommand,
  ping: pingCommand,
};
