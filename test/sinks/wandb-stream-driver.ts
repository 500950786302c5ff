// A stand-in worker for the W&B stream test: streams the first N rows of a run through sinks/wandb-online.ts
// (the official JS SDK in its child process), then waits to be killed or, with "finish", finishes the W&B run.
import { finishWandbStream, streamWandbSteps } from '../../sinks/wandb-online';
import type { WandbRunSpec } from '../../sinks/wandb-local-run';

const [n, mode] = [Number(process.argv[2]), process.argv[3]];
const spec: WandbRunSpec = { root: '/unused', id: 'abc123def456', project: 'agl-test', entity: null, name: 'stream test', config: { learningRate: 0.003 }, offline: false };
const rows = Array.from({ length: n }, (_, step) => ({ step, 'env/all/reward/total': step / 10, 'optim/lr': 0.003 }));

if (mode === 'finish') {
  void finishWandbStream(spec, rows).then(() => process.stdout.write('finished\n'));
} else {
  streamWandbSteps(spec, rows);
  setInterval(() => undefined, 1000); // until killed
}
