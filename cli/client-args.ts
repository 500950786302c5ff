// `npm run client`'s command line: its options, its commands, and the checks made before anything is contacted
// (an unknown command or option, a missing run name or file). Pure, so the docs' commands are checked with it
// (test/docs/commands.test.ts) exactly as the client reads them.
import { parseArgs } from 'node:util';
import { UsageError } from '../common/service-args';
import { parseAssignments } from './run-commands';
import { parseForkStep } from './fork-command';

const OPTIONS = {
  address: { type: 'string' },
  namespace: { type: 'string' },
  profile: { type: 'string' },
  'task-queue': { type: 'string' },
  out: { type: 'string' },
  fresh: { type: 'boolean' },
  help: { type: 'boolean' },
  dir: { type: 'string' },
  store: { type: 'string' },
  model: { type: 'string' },
  renderer: { type: 'string' },
  supervised: { type: 'boolean' },
  'train-on': { type: 'string' },
  text: { type: 'boolean' },
  'from-step': { type: 'string' },
  name: { type: 'string' },
  set: { type: 'string', multiple: true },
  grid: { type: 'string', multiple: true },
  seeds: { type: 'string' },
  'max-parallel': { type: 'string' },
  'early-stop': { type: 'string' },
} as const;

export const CLIENT_COMMANDS = [
  'setup', 'validate', 'start', 'fork', 'status', 'watch', 'pause', 'resume', 'checkpoint', 'configure', 'stop', 'list',
  'report', 'export', 'ping', 'render', 'tokenizer', 'sweep', 'sweep-status',
] as const;

/** Commands about one run, named by the first argument. */
const RUN_COMMANDS = new Set(['fork', 'status', 'watch', 'pause', 'resume', 'checkpoint', 'configure', 'stop']);

export type ClientCommandLine = ReturnType<typeof parseClient>;

function parseClient(argv: string[]) {
  const parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, ...rest] = parsed.positionals;
  return { command, rest, values: parsed.values };
}

/** Parses the client's arguments; a UsageError (exit 2) for an unknown option. */
export function parseClientArgs(argv: string[]): ClientCommandLine {
  try {
    return parseClient(argv);
  } catch (err) {
    throw new UsageError(`client: ${(err as Error).message.split('.')[0]} (npm run client -- --help lists the commands and options)`);
  }
}

/** The mistakes a command line shows before anything is contacted, each as a one-line UsageError. */
export function checkClientCommandLine({ command, rest, values }: ClientCommandLine): void {
  if (values.help || !command) return;
  if (!(CLIENT_COMMANDS as readonly string[]).includes(command)) {
    throw new UsageError(`client: unknown command ${JSON.stringify(command)} (npm run client -- --help lists the commands)`);
  }
  if (RUN_COMMANDS.has(command) && !rest[0]) throw new UsageError(`client ${command}: needs a run name, e.g. npm run client -- ${command} hello`);
  if (command === 'sweep-status' && !rest[0]) throw new UsageError('client sweep-status: needs a sweep name, e.g. npm run client -- sweep-status hello');
  if ((command === 'validate' || command === 'start' || command === 'sweep') && !rest[0]) {
    throw new UsageError(`client ${command}: needs a run config file, e.g. agents/examples/hello.run.json`);
  }
  if (command === 'render' && (!values.model || !rest[0])) {
    throw new UsageError('client render: needs --model M and a FILE, e.g. npm run client -- render --model Qwen/Qwen3-8B chat.json');
  }
  if (command === 'tokenizer' && (rest[0] !== 'fetch' || !rest[1])) throw new UsageError('client tokenizer: usage: npm run client -- tokenizer fetch <org/Model>');
  if (command === 'configure') {
    let changes: Record<string, unknown>;
    try {
      changes = parseAssignments(rest.slice(1));
    } catch (err) {
      throw new UsageError(`client configure: ${(err as Error).message} (e.g. configure hello learningRate=0.001)`);
    }
    if (Object.keys(changes).length === 0) throw new UsageError('client configure: nothing to change (e.g. configure hello learningRate=0.001)');
  }
  if (command === 'fork') {
    try {
      parseAssignments(values.set ?? []);
    } catch (err) {
      throw new UsageError(`client fork: --set ${(err as Error).message}`);
    }
    parseForkStep(values['from-step']); // a CommandError (exit 1), as before this check moved here
  }
}
