// The client commands that need no Temporal server: render a conversation, fetch a tokenizer, validate a run config.
import { UsageError } from '../common/service-args';
import { fetchTokenizerFiles } from '../chat/tokenizer-files';
import { runNameOf } from '../config/run-config';
import { loadConfigOrExit, type CommandContext } from './command-context';
import { render } from './render-command';

export async function renderCommand({ values, rest }: CommandContext): Promise<void> {
  if (!values.model || !rest[0]) throw new UsageError('client render: needs --model M and a FILE, e.g. npm run client -- render --model Qwen/Qwen3-8B chat.json');
  const { line, warning, note } = render({
    model: values.model,
    renderer: values.renderer,
    supervised: values.supervised,
    trainOnWhat: values['train-on'],
    text: values.text,
    file: rest[0],
  });
  if (warning) process.stderr.write(`warning: ${warning}\n`);
  if (note) process.stderr.write(`note: ${note}\n`);
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export async function tokenizerCommand({ rest }: CommandContext): Promise<void> {
  if (rest[0] !== 'fetch' || !rest[1]) throw new UsageError('client tokenizer: usage: npm run client -- tokenizer fetch <org/Model>');
  process.stdout.write(`${await fetchTokenizerFiles(rest[1])}\n`);
}

export async function validateCommand(c: CommandContext): Promise<void> {
  const cfg = await loadConfigOrExit(c, c.rest[0]);
  process.stdout.write(`${c.rest[0]}: valid (run ${runNameOf(cfg)})\n`);
}
