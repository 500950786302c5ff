// Dense kernels on Float64Array rows (row-major). Float64 keeps gradient checks tight; every loop has a
// fixed order, so results are bit-identical run to run.

/** Σ_i a[ao+i]·b[bo+i] with four accumulators (about 1.5x faster in V8 than one). */
export function dot(a: Float64Array, ao: number, b: Float64Array, bo: number, n: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += a[ao + i] * b[bo + i];
    s1 += a[ao + i + 1] * b[bo + i + 1];
    s2 += a[ao + i + 2] * b[bo + i + 2];
    s3 += a[ao + i + 3] * b[bo + i + 3];
  }
  for (; i < n; i++) s0 += a[ao + i] * b[bo + i];
  return (s0 + s1) + (s2 + s3);
}

/** y[T x N] = x[T x M] · Wᵀ (+ bias[N]); W is [N x M] (torch Linear layout) at wOff in `P`. */
export function matmul(x: Float64Array, T: number, M: number, P: Float64Array, wOff: number, N: number, bOff: number, y: Float64Array): void {
  for (let t = 0; t < T; t++) {
    const xo = t * M;
    const yo = t * N;
    for (let n = 0; n < N; n++) {
      const s = dot(x, xo, P, wOff + n * M, M);
      y[yo + n] = bOff >= 0 ? s + P[bOff + n] : s;
    }
  }
}

/**
 * Backward of matmul: dW += dyᵀ·x, dbias += Σ_t dy, and dx = dy·W (overwritten) when dx is given.
 * Works on transposed copies so every inner loop is a contiguous dot product; rows of dy that are
 * all zero (positions with no loss) are left out.
 */
export function matmulBackward(
  x: Float64Array, T: number, M: number, P: Float64Array, wOff: number, N: number, bOff: number,
  dy: Float64Array, G: Float64Array, dx: Float64Array | null,
): void {
  const rows: number[] = [];
  for (let t = 0; t < T; t++) {
    const yo = t * N;
    for (let n = 0; n < N; n++) if (dy[yo + n] !== 0) { rows.push(t); break; }
  }
  const R = rows.length;
  if (dx) dx.fill(0, 0, T * M);
  if (R === 0) return;
  const dyT = new Float64Array(N * R);
  const xT = new Float64Array(M * R);
  for (let r = 0; r < R; r++) {
    const t = rows[r];
    for (let n = 0; n < N; n++) dyT[n * R + r] = dy[t * N + n];
    for (let m = 0; m < M; m++) xT[m * R + r] = x[t * M + m];
  }
  for (let n = 0; n < N; n++) {
    if (bOff >= 0) { let s = 0; for (let r = 0; r < R; r++) s += dyT[n * R + r]; G[bOff + n] += s; }
    const go = wOff + n * M;
    for (let m = 0; m < M; m++) G[go + m] += dot(dyT, n * R, xT, m * R, R);
  }
  if (!dx) return;
  const WT = new Float64Array(M * N);
  for (let n = 0; n < N; n++) for (let m = 0; m < M; m++) WT[m * N + n] = P[wOff + n * M + m];
  for (let r = 0; r < R; r++) {
    const t = rows[r];
    for (let m = 0; m < M; m++) dx[t * M + m] = dot(dy, t * N, WT, m * N, N);
  }
}

/** LayerNorm over rows of width D; keeps mean and 1/std per row for the backward. */
export function layerNorm(x: Float64Array, T: number, D: number, P: Float64Array, gOff: number, bOff: number,
  y: Float64Array, mean: Float64Array, rstd: Float64Array): void {
  for (let t = 0; t < T; t++) {
    const o = t * D;
    let mu = 0;
    for (let i = 0; i < D; i++) mu += x[o + i];
    mu /= D;
    let v = 0;
    for (let i = 0; i < D; i++) { const z = x[o + i] - mu; v += z * z; }
    const r = 1 / Math.sqrt(v / D + 1e-5);
    mean[t] = mu;
    rstd[t] = r;
    for (let i = 0; i < D; i++) y[o + i] = (x[o + i] - mu) * r * P[gOff + i] + P[bOff + i];
  }
}

/** Backward of layerNorm: accumulates dgain/dbias into G and ADDS dx into `dx`. */
export function layerNormBackward(x: Float64Array, T: number, D: number, P: Float64Array, gOff: number, bOff: number,
  mean: Float64Array, rstd: Float64Array, dy: Float64Array, G: Float64Array, dx: Float64Array): void {
  for (let t = 0; t < T; t++) {
    const o = t * D;
    const mu = mean[t];
    const r = rstd[t];
    let sdy = 0;
    let sdyx = 0;
    for (let i = 0; i < D; i++) {
      const xh = (x[o + i] - mu) * r;
      const g = dy[o + i];
      G[gOff + i] += g * xh;
      G[bOff + i] += g;
      const dxh = g * P[gOff + i];
      sdy += dxh;
      sdyx += dxh * xh;
    }
    sdy /= D;
    sdyx /= D;
    for (let i = 0; i < D; i++) {
      const xh = (x[o + i] - mu) * r;
      dx[o + i] += r * (dy[o + i] * P[gOff + i] - sdy - xh * sdyx);
    }
  }
}

const GC = Math.sqrt(2 / Math.PI);

/** GELU (tanh approximation), elementwise. */
export function gelu(u: Float64Array, n: number, a: Float64Array): void {
  for (let i = 0; i < n; i++) {
    const x = u[i];
    a[i] = 0.5 * x * (1 + Math.tanh(GC * (x + 0.044715 * x * x * x)));
  }
}

/** du = da · gelu'(u) (overwrites du). */
export function geluBackward(u: Float64Array, n: number, da: Float64Array, du: Float64Array): void {
  for (let i = 0; i < n; i++) {
    const x = u[i];
    const th = Math.tanh(GC * (x + 0.044715 * x * x * x));
    const d = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GC * (1 + 3 * 0.044715 * x * x);
    du[i] = da[i] * d;
  }
}

/**
 * Which earlier positions a position may attend to. null: plain causal. Otherwise a packed batch:
 * seg[j] = 0 marks a shared prefix every row sees; rows of segment s ≥ 1 also see their own segment.
 */
export type Segments = Int32Array | null;

export function visible(seg: Segments, i: number, j: number): boolean {
  return seg === null || seg[j] === 0 || seg[j] === seg[i];
}

/**
 * Causal multi-head attention. qkv rows are [q | k | v] (width 3D). probs[h][i*T + j] for j ≤ i
 * (0 where not visible). out[T x D] = concatenated heads.
 */
export function attention(qkv: Float64Array, T: number, D: number, H: number, probs: Float64Array, out: Float64Array,
  seg: Segments = null): void {
  const dh = D / H;
  const W = 3 * D;
  const scale = 1 / Math.sqrt(dh);
  out.fill(0, 0, T * D);
  for (let h = 0; h < H; h++) {
    const qo = h * dh;
    const ko = D + h * dh;
    const vo = 2 * D + h * dh;
    const po = h * T * T;
    for (let i = 0; i < T; i++) {
      let mx = -Infinity;
      const qi = i * W + qo;
      for (let j = 0; j <= i; j++) {
        if (!visible(seg, i, j)) continue;
        const kj = j * W + ko;
        let s = 0;
        for (let e = 0; e < dh; e++) s += qkv[qi + e] * qkv[kj + e];
        s *= scale;
        probs[po + i * T + j] = s;
        if (s > mx) mx = s;
      }
      let z = 0;
      for (let j = 0; j <= i; j++) {
        if (!visible(seg, i, j)) { probs[po + i * T + j] = 0; continue; }
        const p = Math.exp(probs[po + i * T + j] - mx);
        probs[po + i * T + j] = p;
        z += p;
      }
      const oi = i * D + h * dh;
      for (let j = 0; j <= i; j++) {
        if (!visible(seg, i, j)) continue;
        const p = probs[po + i * T + j] / z;
        probs[po + i * T + j] = p;
        const vj = j * W + vo;
        for (let e = 0; e < dh; e++) out[oi + e] += p * qkv[vj + e];
      }
    }
  }
}

/** Backward of attention: dqkv (overwritten) from dout. `tmp` needs T entries. */
export function attentionBackward(qkv: Float64Array, T: number, D: number, H: number, probs: Float64Array,
  dout: Float64Array, dqkv: Float64Array, tmp: Float64Array, seg: Segments = null): void {
  const dh = D / H;
  const W = 3 * D;
  const scale = 1 / Math.sqrt(dh);
  dqkv.fill(0, 0, T * W);
  for (let h = 0; h < H; h++) {
    const qo = h * dh;
    const ko = D + h * dh;
    const vo = 2 * D + h * dh;
    const po = h * T * T;
    for (let i = 0; i < T; i++) {
      const oi = i * D + h * dh;
      let any = false;
      for (let e = 0; e < dh; e++) if (dout[oi + e] !== 0) { any = true; break; }
      if (!any) continue;
      // dP_ij = dout_i · v_j ; dv_j += p_ij dout_i
      let dot = 0;
      for (let j = 0; j <= i; j++) {
        if (!visible(seg, i, j)) continue;
        const p = probs[po + i * T + j];
        const vj = j * W + vo;
        let s = 0;
        for (let e = 0; e < dh; e++) {
          s += dout[oi + e] * qkv[vj + e];
          dqkv[vj + e] += p * dout[oi + e];
        }
        tmp[j] = s;
        dot += p * s;
      }
      const qi = i * W + qo;
      for (let j = 0; j <= i; j++) {
        if (!visible(seg, i, j)) continue;
        const ds = probs[po + i * T + j] * (tmp[j] - dot) * scale;
        if (ds === 0) continue;
        const kj = j * W + ko;
        for (let e = 0; e < dh; e++) {
          dqkv[qi + e] += ds * qkv[kj + e];
          dqkv[kj + e] += ds * qkv[qi + e];
        }
      }
    }
  }
}
