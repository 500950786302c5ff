// `client setup`: registers the search attributes runs write on the namespace, and waits until the server lists them.
import type { TemporalSettings } from '../common/temporal-settings';
import { CommandError } from './mistakes';
import { checkSearchAttributes, cliCommand, registerSearchAttributes, REQUIRED_ATTRIBUTES } from './search-attribute-setup';
import type { CommandContext } from './command-context';
import { setTimeout as sleep } from 'node:timers/promises';

export async function setupCommand({ connect, settings }: CommandContext): Promise<void> {
  const client = await connect();
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
    await sleep(500);
  }
  process.stdout.write(`namespace ${settings.namespace} is ready for training runs\n`);
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
