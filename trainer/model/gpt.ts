// A tiny pre-LayerNorm GPT over byte tokens: forward with saved activations, and its manual backward.
import { ModelConfig, Layout, layoutOf } from './config';
import { Rng } from './rng';
import { attention, attentionBackward, gelu, geluBackward, layerNorm, layerNormBackward, matmul, matmulBackward, Segments, visible } from './ops';

/** Fresh weights: N(0, 0.02), residual projections scaled by 1/sqrt(2·layers), LayerNorm gains 1. */
export function initParams(c: ModelConfig, seed: string | number): Float64Array {
  const L = layoutOf(c);
  const P = new Float64Array(L.size);
  const rng = new Rng('init', seed);
  const d = c.dModel;
  const fill = (off: number, n: number, std: number) => { for (let i = 0; i < n; i++) P[off + i] = rng.normal() * std; };
  const ones = (off: number, n: number) => P.fill(1, off, off + n);
  fill(L.wte, c.vocabSize * d, 0.02);
  fill(L.wpe, c.contextLength * d, 0.02);
  fill(L.wprev, (c.vocabSize + 1) * d, 0.02);
  const rs = 0.02 / Math.sqrt(2 * c.nLayers);
  for (const l of L.layers) {
    ones(l.ln1g, d);
    fill(l.wqkv, d * 3 * d, 0.02);
    fill(l.wo, d * d, rs);
    ones(l.ln2g, d);
    fill(l.w1, d * c.dFF, 0.02);
    fill(l.w2, c.dFF * d, rs);
  }
  ones(L.lnfg, d);
  fill(L.wout, d * c.vocabSize, 0.02);
  fill(L.wcq, c.dCopy * d, 0.02);
  fill(L.wck, c.dCopy * d, 0.02);
  P[L.cgain] = 0.2;
  return P;
}

/**
 * Offset of the previous-token embedding row for position t. Giving each position its predecessor's
 * identity directly lets one attention layer do induction-style copying (the hello task copies a
 * number from the prompt), which a 2-layer model otherwise needs many more steps to discover.
 */
export function prevRow(c: ModelConfig, L: Layout, tokens: ArrayLike<number>, t: number): number {
  return prevRowOf(c, L, t > 0 ? tokens[t - 1] : -1);
}

export function prevRowOf(c: ModelConfig, L: Layout, prevToken: number): number {
  return L.wprev + (prevToken >= 0 ? prevToken : c.vocabSize) * c.dModel;
}

interface LayerCache {
  xIn: Float64Array; h1: Float64Array; m1: Float64Array; r1: Float64Array;
  qkv: Float64Array; probs: Float64Array; att: Float64Array;
  xMid: Float64Array; h2: Float64Array; m2: Float64Array; r2: Float64Array;
  u: Float64Array; a: Float64Array;
}

/**
 * Several sequences packed into one row set: a shared prefix (seg 0) then each sequence's own tail
 * (seg 1, 2, ...). pos is each token's position within its own sequence and prev its predecessor
 * there (-1: none). The packed forward computes exactly what separate forwards would.
 */
export interface Packing {
  pos: Int32Array;
  prev: Int32Array;
  seg: Int32Array;
}

export function plainPacking(tokens: ArrayLike<number>): Packing {
  const T = tokens.length;
  const pos = new Int32Array(T);
  const prev = new Int32Array(T);
  for (let t = 0; t < T; t++) {
    pos[t] = t;
    prev[t] = t > 0 ? tokens[t - 1] : -1;
  }
  return { pos, prev, seg: new Int32Array(0) };
}

export interface ForwardCache {
  T: number;
  tokens: ArrayLike<number>;
  pack: Packing;
  seg: Segments;
  layers: LayerCache[];
  xOut: Float64Array; hf: Float64Array; mf: Float64Array; rf: Float64Array;
  /** Copy head: queries, keys [T x dCopy] and attention probs [T x T] (j ≤ i). */
  cq: Float64Array; ck: Float64Array; cprobs: Float64Array;
  /** [T x V] raw logits. */
  logits: Float64Array;
}

/** The copy head's gain is stored divided by this, so Adam moves it at a useful speed. */
export const COPY_GAIN_SCALE = 10;


/** Forward over one sequence (tokens already validated: ids < V, length ≤ context). */
export function forward(c: ModelConfig, L: Layout, P: Float64Array, tokens: ArrayLike<number>, packing?: Packing): ForwardCache {
  const T = tokens.length;
  const pack = packing ?? plainPacking(tokens);
  const seg: Segments = packing ? packing.seg : null;
  const d = c.dModel;
  const f = c.dFF;
  let x = new Float64Array(T * d);
  for (let t = 0; t < T; t++) {
    const e = L.wte + tokens[t] * d;
    const p = L.wpe + pack.pos[t] * d;
    const q = prevRowOf(c, L, pack.prev[t]);
    for (let i = 0; i < d; i++) x[t * d + i] = P[e + i] + P[p + i] + P[q + i];
  }
  const layers: LayerCache[] = [];
  for (const lo of L.layers) {
    const lc: LayerCache = {
      xIn: x, h1: new Float64Array(T * d), m1: new Float64Array(T), r1: new Float64Array(T),
      qkv: new Float64Array(T * 3 * d), probs: new Float64Array(c.nHeads * T * T), att: new Float64Array(T * d),
      xMid: new Float64Array(T * d), h2: new Float64Array(T * d), m2: new Float64Array(T), r2: new Float64Array(T),
      u: new Float64Array(T * f), a: new Float64Array(T * f),
    };
    layerNorm(x, T, d, P, lo.ln1g, lo.ln1b, lc.h1, lc.m1, lc.r1);
    matmul(lc.h1, T, d, P, lo.wqkv, 3 * d, -1, lc.qkv);
    attention(lc.qkv, T, d, c.nHeads, lc.probs, lc.att, seg);
    matmul(lc.att, T, d, P, lo.wo, d, -1, lc.xMid);
    for (let i = 0; i < T * d; i++) lc.xMid[i] += x[i];
    layerNorm(lc.xMid, T, d, P, lo.ln2g, lo.ln2b, lc.h2, lc.m2, lc.r2);
    matmul(lc.h2, T, d, P, lo.w1, f, lo.b1, lc.u);
    gelu(lc.u, T * f, lc.a);
    const xOut = new Float64Array(T * d);
    matmul(lc.a, T, f, P, lo.w2, d, lo.b2, xOut);
    for (let i = 0; i < T * d; i++) xOut[i] += lc.xMid[i];
    layers.push(lc);
    x = xOut;
  }
  const hf = new Float64Array(T * d);
  const mf = new Float64Array(T);
  const rf = new Float64Array(T);
  layerNorm(x, T, d, P, L.lnfg, L.lnfb, hf, mf, rf);
  const logits = new Float64Array(T * c.vocabSize);
  matmul(hf, T, d, P, L.wout, c.vocabSize, -1, logits);
  const dc = c.dCopy;
  const cq = new Float64Array(T * dc);
  const ck = new Float64Array(T * dc);
  const cprobs = new Float64Array(T * T);
  if (dc > 0) {
    matmul(hf, T, d, P, L.wcq, dc, -1, cq);
    matmul(hf, T, d, P, L.wck, dc, -1, ck);
    copyHead(c, P[L.cgain] * COPY_GAIN_SCALE, tokens, T, cq, ck, cprobs, logits, seg);
  }
  return { T, tokens, pack, seg, layers, xOut: x, hf, mf, rf, cq, ck, cprobs, logits };
}

/**
 * Copy head (pointer-generator style, additive): logits_i[tokens[j]] += gain · a_ij with
 * a_i = softmax_j≤i(q_i·k_j / sqrt(dCopy)). Its output circuit is fixed to "the token at j", so the
 * model only has to learn where to point, which makes copying from the prompt quick to learn.
 */
export function copyHead(c: ModelConfig, gain: number, tokens: ArrayLike<number>, T: number,
  cq: Float64Array, ck: Float64Array, cprobs: Float64Array, logits: Float64Array, seg: Segments): void {
  const dc = c.dCopy;
  const V = c.vocabSize;
  const scale = 1 / Math.sqrt(dc);
  for (let i = 0; i < T; i++) {
    let mx = -Infinity;
    for (let j = 0; j <= i; j++) {
      if (!visible(seg, i, j)) continue;
      let s = 0;
      for (let e = 0; e < dc; e++) s += cq[i * dc + e] * ck[j * dc + e];
      s *= scale;
      cprobs[i * T + j] = s;
      if (s > mx) mx = s;
    }
    let z = 0;
    for (let j = 0; j <= i; j++) {
      if (!visible(seg, i, j)) { cprobs[i * T + j] = 0; continue; }
      const p = Math.exp(cprobs[i * T + j] - mx);
      cprobs[i * T + j] = p;
      z += p;
    }
    for (let j = 0; j <= i; j++) {
      if (!visible(seg, i, j)) continue;
      const p = cprobs[i * T + j] / z;
      cprobs[i * T + j] = p;
      logits[i * V + tokens[j]] += gain * p;
    }
  }
}

/** Log-softmax of row t of logits, written to out[V]. */
export function logSoftmaxRow(logits: Float64Array, t: number, V: number, out: Float64Array): void {
  const o = t * V;
  let mx = -Infinity;
  for (let v = 0; v < V; v++) if (logits[o + v] > mx) mx = logits[o + v];
  let z = 0;
  for (let v = 0; v < V; v++) z += Math.exp(logits[o + v] - mx);
  const lz = mx + Math.log(z);
  for (let v = 0; v < V; v++) out[v] = logits[o + v] - lz;
}

/** log p(targets[t] | tokens[≤t]) for every position, plus the softmax rows needed by the backward. */
export function targetLogprobs(c: ModelConfig, cache: ForwardCache, targets: ArrayLike<number>): { lp: Float64Array; logp: Float64Array } {
  const V = c.vocabSize;
  const logp = new Float64Array(cache.T * V);
  const row = new Float64Array(V);
  const lp = new Float64Array(cache.T);
  for (let t = 0; t < cache.T; t++) {
    logSoftmaxRow(cache.logits, t, V, row);
    logp.set(row, t * V);
    lp[t] = row[targets[t]];
  }
  return { lp, logp };
}

/**
 * Backward from dL/dlp_t (per position, for the target token) into the gradient accumulator G.
 * dL/dlogits_t = dlp_t · (onehot(target_t) − softmax_t).
 */
export function backward(c: ModelConfig, L: Layout, P: Float64Array, cache: ForwardCache, targets: ArrayLike<number>,
  logp: Float64Array, dlp: Float64Array, G: Float64Array): void {
  const T = cache.T;
  const d = c.dModel;
  const f = c.dFF;
  const V = c.vocabSize;
  const dlogits = new Float64Array(T * V);
  for (let t = 0; t < T; t++) {
    const g = dlp[t];
    if (g === 0) continue;
    const o = t * V;
    for (let v = 0; v < V; v++) dlogits[o + v] = -g * Math.exp(logp[o + v]);
    dlogits[o + targets[t]] += g;
  }
  const dhf = new Float64Array(T * d);
  matmulBackward(cache.hf, T, d, P, L.wout, V, -1, dlogits, G, dhf);
  if (c.dCopy > 0) copyHeadBackward(c, L, P, cache, dlogits, G, dhf);
  let dx = new Float64Array(T * d);
  layerNormBackward(cache.xOut, T, d, P, L.lnfg, L.lnfb, cache.mf, cache.rf, dhf, G, dx);
  const da = new Float64Array(T * f);
  const du = new Float64Array(T * f);
  const dh = new Float64Array(T * d);
  const datt = new Float64Array(T * d);
  const dqkv = new Float64Array(T * 3 * d);
  const tmp = new Float64Array(T);
  for (let li = L.layers.length - 1; li >= 0; li--) {
    const lo = L.layers[li];
    const lc = cache.layers[li];
    // MLP branch: xOut = xMid + W2·gelu(W1·LN2(xMid)); dx flows to xMid directly and through the branch.
    matmulBackward(lc.a, T, f, P, lo.w2, d, lo.b2, dx, G, da);
    geluBackward(lc.u, T * f, da, du);
    matmulBackward(lc.h2, T, d, P, lo.w1, f, lo.b1, du, G, dh);
    const dMid = dx; // residual path; LN2 backward adds into it
    layerNormBackward(lc.xMid, T, d, P, lo.ln2g, lo.ln2b, lc.m2, lc.r2, dh, G, dMid);
    // Attention branch: xMid = xIn + Wo·attn(LN1(xIn)).
    matmulBackward(lc.att, T, d, P, lo.wo, d, -1, dMid, G, datt);
    attentionBackward(lc.qkv, T, d, c.nHeads, lc.probs, datt, dqkv, tmp, cache.seg);
    matmulBackward(lc.h1, T, d, P, lo.wqkv, 3 * d, -1, dqkv, G, dh);
    const dIn = dMid;
    layerNormBackward(lc.xIn, T, d, P, lo.ln1g, lo.ln1b, lc.m1, lc.r1, dh, G, dIn);
    dx = dIn;
  }
  for (let t = 0; t < T; t++) {
    const e = L.wte + cache.tokens[t] * d;
    const p = L.wpe + cache.pack.pos[t] * d;
    const q = prevRowOf(c, L, cache.pack.prev[t]);
    for (let i = 0; i < d; i++) {
      G[e + i] += dx[t * d + i];
      G[p + i] += dx[t * d + i];
      G[q + i] += dx[t * d + i];
    }
  }
}

/** Backward of the copy head: into its gain, wcq, wck, and ADDS into dhf. */
function copyHeadBackward(c: ModelConfig, L: Layout, P: Float64Array, cache: ForwardCache, dlogits: Float64Array,
  G: Float64Array, dhf: Float64Array): void {
  const T = cache.T;
  const dc = c.dCopy;
  const V = c.vocabSize;
  const d = c.dModel;
  const gain = P[L.cgain] * COPY_GAIN_SCALE;
  const scale = 1 / Math.sqrt(dc);
  const { cq, ck, cprobs, tokens } = cache;
  const dq = new Float64Array(T * dc);
  const dk = new Float64Array(T * dc);
  const da = new Float64Array(T);
  let dgain = 0;
  for (let i = 0; i < T; i++) {
    const o = i * V;
    let any = false;
    for (let v = 0; v < V; v++) if (dlogits[o + v] !== 0) { any = true; break; }
    if (!any) continue;
    let dot = 0;
    for (let j = 0; j <= i; j++) {
      if (!visible(cache.seg, i, j)) continue;
      const g = dlogits[o + tokens[j]];
      const p = cprobs[i * T + j];
      dgain += p * g;
      da[j] = gain * g;
      dot += p * da[j];
    }
    for (let j = 0; j <= i; j++) {
      if (!visible(cache.seg, i, j)) continue;
      const ds = cprobs[i * T + j] * (da[j] - dot) * scale;
      if (ds === 0) continue;
      for (let e = 0; e < dc; e++) {
        dq[i * dc + e] += ds * ck[j * dc + e];
        dk[j * dc + e] += ds * cq[i * dc + e];
      }
    }
  }
  G[L.cgain] += dgain * COPY_GAIN_SCALE;
  const tmp = new Float64Array(T * d);
  matmulBackward(cache.hf, T, d, P, L.wcq, dc, -1, dq, G, tmp);
  for (let i = 0; i < T * d; i++) dhf[i] += tmp[i];
  matmulBackward(cache.hf, T, d, P, L.wck, dc, -1, dk, G, tmp);
  for (let i = 0; i < T * d; i++) dhf[i] += tmp[i];
}
