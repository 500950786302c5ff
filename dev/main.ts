// `npm start`: the embedded default. Brings up the Temporal dev server (state in .data/temporal/dev.db, UI on
// http://127.0.0.1:8233) and the worker, and keeps them running until Ctrl-C.
import path from 'node:path';
import { startProcess } from '../common/processes';
import { ensureTemporal } from './temporal-server';

const ROOT = path.resolve(__dirname, '..');

async function main(): Promise<void> {
  const temporal = await ensureTemporal({ dbFile: path.join(ROOT, '.data', 'temporal', 'dev.db'), uiPort: 8233 });
  process.stdout.write(`Temporal at ${temporal.address}${temporal.uiUrl ? `, UI at ${temporal.uiUrl}` : ''}\n`);
  const worker = await startProcess({
    name: 'worker',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'worker.ts')],
    env: { ...process.env, TEMPORAL_ADDRESS: temporal.address },
    readyLine: /worker polling task queue/,
    echo: true,
  });
  process.stdout.write('ready: Ctrl-C stops everything\n');
  const stop = async () => {
    await worker.stop();
    await temporal.stop();
    process.exit(0);
  };
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  await worker.exited;
  await temporal.stop();
  process.exit(1);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
