// Incremental (KV-cached) forward for sampling: the prompt runs through the batch forward once, then
// each new token costs one row per layer. Same arithmetic as gpt.forward, so logprobs agree with it.
import { ModelConfig, Layout } from './config';
import { COPY_GAIN_SCALE, ForwardCache, prevRow } from './gpt';
import { dot, gelu, layerNorm, matmul } from './ops';

export interface DecodeState {
  tokens: number[];
  /** Per layer: keys and values [C x d]. */
  k: Float64Array[];
  v: Float64Array[];
  /** Copy-head keys [C x dCopy]. */
  ck: Float64Array;
}

/** Decode state after the prompt, taken from the prompt's batch forward. */
export function stateFromPrompt(c: ModelConfig, cache: ForwardCache): DecodeState {
  const d = c.dModel;
  const T = cache.T;
  const k: Float64Array[] = [];
  const v: Float64Array[] = [];
  for (const lc of cache.layers) {
    const kl = new Float64Array(c.contextLength * d);
    const vl = new Float64Array(c.contextLength * d);
    for (let t = 0; t < T; t++) {
      for (let i = 0; i < d; i++) {
        kl[t * d + i] = lc.qkv[t * 3 * d + d + i];
        vl[t * d + i] = lc.qkv[t * 3 * d + 2 * d + i];
      }
    }
    k.push(kl);
    v.push(vl);
  }
  const ck = new Float64Array(c.contextLength * c.dCopy);
  ck.set(cache.ck.subarray(0, T * c.dCopy));
  return { tokens: Array.from(cache.tokens), k, v, ck };
}

export function cloneState(s: DecodeState): DecodeState {
  return { tokens: s.tokens.slice(), k: s.k.map((a) => a.slice()), v: s.v.map((a) => a.slice()), ck: s.ck.slice() };
}

/** Appends `token` at position state.tokens.length and returns the logits [V] for the next position. */
export function step(c: ModelConfig, L: Layout, P: Float64Array, s: DecodeState, token: number): Float64Array {
  const t = s.tokens.length;
  s.tokens.push(token);
  const d = c.dModel;
  const H = c.nHeads;
  const dh = d / H;
  const f = c.dFF;
  const x = new Float64Array(d);
  const e = L.wte + token * d;
  const p = L.wpe + t * d;
  const q = prevRow(c, L, s.tokens, t);
  for (let i = 0; i < d; i++) x[i] = P[e + i] + P[p + i] + P[q + i];
  const h = new Float64Array(d);
  const mean = new Float64Array(1);
  const rstd = new Float64Array(1);
  const qkv = new Float64Array(3 * d);
  const att = new Float64Array(d);
  const proj = new Float64Array(d);
  const u = new Float64Array(f);
  const a = new Float64Array(f);
  const probs = new Float64Array(t + 1);
  const scale = 1 / Math.sqrt(dh);
  for (let li = 0; li < L.layers.length; li++) {
    const lo = L.layers[li];
    const K = s.k[li];
    const Vv = s.v[li];
    layerNorm(x, 1, d, P, lo.ln1g, lo.ln1b, h, mean, rstd);
    matmul(h, 1, d, P, lo.wqkv, 3 * d, -1, qkv);
    for (let i = 0; i < d; i++) {
      K[t * d + i] = qkv[d + i];
      Vv[t * d + i] = qkv[2 * d + i];
    }
    att.fill(0);
    for (let hh = 0; hh < H; hh++) {
      const ho = hh * dh;
      let mx = -Infinity;
      for (let j = 0; j <= t; j++) {
        let sc = 0;
        for (let i = 0; i < dh; i++) sc += qkv[ho + i] * K[j * d + ho + i];
        sc *= scale;
        probs[j] = sc;
        if (sc > mx) mx = sc;
      }
      let z = 0;
      for (let j = 0; j <= t; j++) { probs[j] = Math.exp(probs[j] - mx); z += probs[j]; }
      for (let j = 0; j <= t; j++) {
        const pj = probs[j] / z;
        for (let i = 0; i < dh; i++) att[ho + i] += pj * Vv[j * d + ho + i];
      }
    }
    matmul(att, 1, d, P, lo.wo, d, -1, proj);
    for (let i = 0; i < d; i++) x[i] += proj[i];
    layerNorm(x, 1, d, P, lo.ln2g, lo.ln2b, h, mean, rstd);
    matmul(h, 1, d, P, lo.w1, f, lo.b1, u);
    gelu(u, f, a);
    matmul(a, 1, f, P, lo.w2, d, lo.b2, proj);
    for (let i = 0; i < d; i++) x[i] += proj[i];
  }
  layerNorm(x, 1, d, P, L.lnfg, L.lnfb, h, mean, rstd);
  const V = c.vocabSize;
  const logits = new Float64Array(V);
  matmul(h, 1, d, P, L.wout, V, -1, logits);
  const dc = c.dCopy;
  if (dc > 0) {
    const cq = new Float64Array(dc);
    const ckRow = new Float64Array(dc);
    matmul(h, 1, d, P, L.wcq, dc, -1, cq);
    matmul(h, 1, d, P, L.wck, dc, -1, ckRow);
    s.ck.set(ckRow, t * dc);
    const cs = 1 / Math.sqrt(dc);
    let mx = -Infinity;
    for (let j = 0; j <= t; j++) {
      probs[j] = dot(cq, 0, s.ck, j * dc, dc) * cs;
      if (probs[j] > mx) mx = probs[j];
    }
    let z = 0;
    for (let j = 0; j <= t; j++) { probs[j] = Math.exp(probs[j] - mx); z += probs[j]; }
    const gain = P[L.cgain] * COPY_GAIN_SCALE;
    for (let j = 0; j <= t; j++) logits[s.tokens[j]] += gain * (probs[j] / z);
  }
  return logits;
}
