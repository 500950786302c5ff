// `npm run trainer`: the local Tinker-compatible trainer on 127.0.0.1:8110 (flags --host --port --data,
// env TRAINER_HOST/_PORT/_DATA; AGL_TRAINER_TOKEN to require a token). Base models are built on first
// use and cached under <data>/base-models; checkpoints live under <data>/runs. `--engine bigram` swaps in
// the bigram stand-in (trainer/server/bigram-engine.ts) for fast protocol-only tests.
import { warnIfOpen } from '../common/access';
import { announceListening, exitOnSignal, parseServiceArgs, runMain, UsageError } from '../common/service-args';
import type { Engine } from './engine';
import { createBigramEngine } from './server/bigram-engine';
import { startTrainerServer } from './server/server';
import { createEngine } from './model';

function engineFor(kind: string, dataDir: string): Engine {
  if (kind === 'local') return createEngine({ dataDir, log: (line) => process.stderr.write(`[trainer] ${line}\n`) });
  if (kind === 'bigram') return createBigramEngine();
  throw new UsageError(`trainer: --engine must be local or bigram, got ${JSON.stringify(kind)}`);
}

runMain(async () => {
  const args = parseServiceArgs(process.argv.slice(2), {
    name: 'trainer',
    envPrefix: 'TRAINER',
    defaultPort: 8110,
    defaultDataDir: '.data/trainer',
    extra: { engine: 'AGL_TRAINER_ENGINE' },
  });
  const engine = engineFor(args.values.engine ?? 'local', args.dataDir);
  const server = await startTrainerServer({
    engine,
    dataDir: args.dataDir,
    host: args.host,
    port: args.port,
    token: process.env.AGL_TRAINER_TOKEN || undefined,
    log: (line) => process.stderr.write(`[trainer] ${line}\n`),
  });
  warnIfOpen('trainer', args.host, process.env.AGL_TRAINER_TOKEN || undefined, 'AGL_TRAINER_TOKEN');
  announceListening('trainer', args.host, server.port);
  exitOnSignal(() => server.close());
});
