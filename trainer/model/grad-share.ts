// One share of a supervised batch (cross_entropy): its loss and gradient, computed in-process or in a
// worker thread (grad-worker.ts). Base-model builds split each batch into two shares so they use both
// cores; the shares' gradients are summed in a fixed order, so the result is the same either way.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { runBatch } from './batch';
import { layoutOf, ModelConfig } from './config';
import { crossEntropy } from './losses';

export interface ShareRequest {
  config: ModelConfig;
  params: Float64Array;
  examples: Array<{ input: number[]; target: number[]; weights: number[] }>;
}

export interface ShareResult {
  loss: number;
  grad: Float64Array;
}

export function gradOfShare(req: ShareRequest): ShareResult {
  const L = layoutOf(req.config);
  const grad = new Float64Array(L.size);
  const items = req.examples.map((e) => ({ input: e.input, target: e.target, loss: (lp: Float64Array) => crossEntropy(lp, e.weights) }));
  const { losses } = runBatch(req.config, L, req.params, items, grad);
  return { loss: losses.reduce((a, x) => a + x, 0), grad };
}

/** Computes shares in worker threads when they can be started, else in this thread. */
export class SharePool {
  private workers: Worker[] = [];

  constructor(n: number) {
    try {
      for (let i = 0; i < n; i++) {
        // Loader hooks of the main thread (tsx) do not reach workers: register tsx's CommonJS hook in them.
        const ext = path.extname(__filename);
        const file = JSON.stringify(path.join(__dirname, `grad-worker${ext}`));
        const w = new Worker(`${ext === '.ts' ? "require('tsx/cjs');" : ''} require(${file});`, { eval: true });
        w.unref();
        this.workers.push(w);
      }
    } catch (e) {
      if (process.env.AGL_DEBUG_WORKERS) console.error('grad workers unavailable:', e);
      this.close();
    }
  }

  /** Live worker threads (0 once they failed: shares then run in-process). */
  get size(): number {
    return this.workers.length;
  }

  async run(shares: ShareRequest[]): Promise<ShareResult[]> {
    if (this.workers.length < shares.length) return shares.map(gradOfShare);
    try {
      return await Promise.all(shares.map((s, i) => new Promise<ShareResult>((resolve, reject) => {
        const w = this.workers[i];
        const onErr = (e: Error) => reject(e);
        w.once('error', onErr);
        w.once('message', (r: ShareResult) => {
          w.off('error', onErr);
          resolve(r);
        });
        w.postMessage(s);
      })));
    } catch (e) {
      if (process.env.AGL_DEBUG_WORKERS) console.error('grad worker failed:', e);
      // A worker failed (e.g. no TypeScript loader in it): compute in-process from now on.
      this.close();
      return shares.map(gradOfShare);
    }
  }

  close(): void {
    for (const w of this.workers) void w.terminate();
    this.workers = [];
  }
}
