// Shared-prefix packing: sequences that start with the same tokens (a prompt and its samples, or a
// corpus batch with a common preamble) run the prefix once. The packed forward gives the same numbers
// as separate forwards (attention is masked per sequence); the prefix's gradient is the sum of the
// sequences' gradients, which the backward gets by summing dL/dlp on shared rows.
import type { Packing } from './gpt';

export interface Packed {
  tokens: number[];
  targets: number[];
  packing: Packing;
  /** rowsOf[k][t] = packed row of position t of the group's k-th sequence. */
  rowsOf: Int32Array[];
  shared: number;
}

function lcp(a: ArrayLike<number>, b: ArrayLike<number>, limit: number): number {
  let i = 0;
  while (i < limit && i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Length of the prefix shared by all inputs AND all targets (so a shared row has one target). */
export function sharedLength(inputs: ArrayLike<number>[], targets: ArrayLike<number>[]): number {
  let k = inputs[0].length;
  for (let i = 1; i < inputs.length; i++) {
    k = lcp(inputs[0], inputs[i], k);
    k = lcp(targets[0], targets[i], k);
  }
  return k;
}

export function packGroup(inputs: ArrayLike<number>[], targets: ArrayLike<number>[]): Packed {
  const K = inputs.length > 1 ? sharedLength(inputs, targets) : 0;
  const tokens: number[] = [];
  const tg: number[] = [];
  const pos: number[] = [];
  const prev: number[] = [];
  const seg: number[] = [];
  for (let t = 0; t < K; t++) {
    tokens.push(inputs[0][t]);
    tg.push(targets[0][t]);
    pos.push(t);
    prev.push(t > 0 ? inputs[0][t - 1] : -1);
    seg.push(0);
  }
  const rowsOf = inputs.map((inp, k) => {
    const rows = new Int32Array(inp.length);
    for (let t = 0; t < inp.length; t++) {
      if (t < K) {
        rows[t] = t;
        continue;
      }
      rows[t] = tokens.length;
      tokens.push(inp[t]);
      tg.push(targets[k][t]);
      pos.push(t);
      prev.push(t > 0 ? inp[t - 1] : -1);
      seg.push(k + 1);
    }
    return rows;
  });
  return {
    tokens, targets: tg, rowsOf, shared: K,
    packing: { pos: Int32Array.from(pos), prev: Int32Array.from(prev), seg: Int32Array.from(seg) },
  };
}

/**
 * Splits sequence indices (in order) into groups of consecutive sequences sharing at least
 * `minShared` leading tokens, each packing to at most `maxRows` rows. Singletons are fine.
 */
export function groupForPacking(inputs: ArrayLike<number>[], targets: ArrayLike<number>[], minShared: number, maxRows: number): number[][] {
  const groups: number[][] = [];
  let cur: number[] = [];
  let k = 0;
  let rows = 0;
  for (let i = 0; i < inputs.length; i++) {
    if (cur.length > 0) {
      const first = cur[0];
      const nk = Math.min(k, lcp(inputs[first], inputs[i], k), lcp(targets[first], targets[i], k));
      // Rows if i joins: shared prefix once + every member's tail.
      const nrows = nk + cur.reduce((a, j) => a + inputs[j].length - nk, 0) + inputs[i].length - nk;
      if (nk >= minShared && nrows <= maxRows) {
        cur.push(i);
        k = nk;
        rows = nrows;
        continue;
      }
      groups.push(cur);
    }
    cur = [i];
    k = inputs[i].length;
    rows = inputs[i].length;
  }
  if (cur.length > 0) groups.push(cur);
  void rows;
  return groups;
}
