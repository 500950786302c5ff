// Worker thread for base-model builds: computes the cross-entropy gradient of its share of a batch.
// The builder sums the shares in a fixed order, so results do not depend on thread timing.
import { parentPort } from 'node:worker_threads';
import { gradOfShare, ShareRequest } from './grad-share';

parentPort?.on('message', (req: ShareRequest) => {
  const out = gradOfShare(req);
  parentPort!.postMessage(out, [out.grad.buffer as ArrayBuffer]);
});
