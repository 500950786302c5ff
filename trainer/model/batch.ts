// Loss and gradient of a batch of sequences, packing those that share a prefix (pack.ts).
import type { Layout, ModelConfig } from './config';
import { backward, forward, targetLogprobs } from './gpt';
import type { LossValue } from './losses';
import { groupForPacking, packGroup } from './pack';

export interface BatchItem {
  input: ArrayLike<number>;
  target: ArrayLike<number>;
  /** The item's loss from its per-position target log-probs. */
  loss: (lp: Float64Array) => LossValue;
}

/** Minimum shared tokens worth packing, and the largest packed row count (attention is O(rows²)). */
const MIN_SHARED = 8;
const MAX_ROWS = 512;

/** Per-item target log-probs and losses; adds d(Σ loss)/dθ into G unless G is null. */
export function runBatch(c: ModelConfig, L: Layout, P: Float64Array, items: BatchItem[], G: Float64Array | null):
  { lps: Float64Array[]; losses: number[] } {
  const lps: Float64Array[] = new Array(items.length);
  const losses: number[] = new Array(items.length);
  const groups = groupForPacking(items.map((x) => x.input), items.map((x) => x.target), MIN_SHARED, MAX_ROWS);
  for (const g of groups) {
    if (g.length === 1) {
      const it = items[g[0]];
      const cache = forward(c, L, P, it.input);
      const { lp, logp } = targetLogprobs(c, cache, it.target);
      const lv = it.loss(lp);
      lps[g[0]] = lp;
      losses[g[0]] = lv.loss;
      if (G) backward(c, L, P, cache, it.target, logp, lv.dlp, G);
      continue;
    }
    const pk = packGroup(g.map((i) => items[i].input), g.map((i) => items[i].target));
    const cache = forward(c, L, P, pk.tokens, pk.packing);
    const { lp: rowLp, logp } = targetLogprobs(c, cache, pk.targets);
    const dlpRows = new Float64Array(pk.tokens.length);
    g.forEach((i, k) => {
      const rows = pk.rowsOf[k];
      const lp = new Float64Array(rows.length);
      for (let t = 0; t < rows.length; t++) lp[t] = rowLp[rows[t]];
      const lv = items[i].loss(lp);
      for (let t = 0; t < rows.length; t++) dlpRows[rows[t]] += lv.dlp[t];
      lps[i] = lp;
      losses[i] = lv.loss;
    });
    if (G) backward(c, L, P, cache, pk.targets, logp, dlpRows, G);
  }
  return { lps, losses };
}
