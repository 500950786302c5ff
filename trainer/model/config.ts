// Shape of the tiny decoder-only transformer and where each tensor lives in the flat parameter vector.

export interface ModelConfig {
  vocabSize: number;
  contextLength: number;
  dModel: number;
  nLayers: number;
  nHeads: number;
  dFF: number;
  /** Width of the copy head's queries/keys (0 = no copy head). */
  dCopy: number;
}

export interface LayerOffsets {
  ln1g: number; ln1b: number; wqkv: number; wo: number;
  ln2g: number; ln2b: number; w1: number; b1: number; w2: number; b2: number;
}

export interface Layout {
  wte: number; // [V x d]
  wpe: number; // [C x d]
  wprev: number; // [(V+1) x d] embedding of the previous token (row V = none), a "token shift"
  layers: LayerOffsets[];
  lnfg: number; lnfb: number;
  wout: number; // [V x d]
  wcq: number; // [dCopy x d] copy-head query
  wck: number; // [dCopy x d] copy-head key
  cgain: number; // [1] copy-head gain (times COPY_GAIN_SCALE)
  size: number;
}

export function layoutOf(c: ModelConfig): Layout {
  let o = 0;
  const take = (n: number) => {
    const at = o;
    o += n;
    return at;
  };
  const d = c.dModel;
  const wte = take(c.vocabSize * d);
  const wpe = take(c.contextLength * d);
  const wprev = take((c.vocabSize + 1) * d);
  const layers: LayerOffsets[] = [];
  for (let l = 0; l < c.nLayers; l++) {
    layers.push({
      ln1g: take(d), ln1b: take(d), wqkv: take(d * 3 * d), wo: take(d * d),
      ln2g: take(d), ln2b: take(d), w1: take(d * c.dFF), b1: take(c.dFF), w2: take(c.dFF * d), b2: take(d),
    });
  }
  const lnfg = take(d);
  const lnfb = take(d);
  const wout = take(d * c.vocabSize);
  const wcq = take(c.dCopy * d);
  const wck = take(c.dCopy * d);
  const cgain = take(1);
  return { wte, wpe, wprev, layers, lnfg, lnfb, wout, wcq, wck, cgain, size: o };
}

export function archName(c: ModelConfig): string {
  return `gpt-bytes-d${c.dModel}-l${c.nLayers}-h${c.nHeads}-f${c.dFF}-c${c.contextLength}-copy${c.dCopy}`;
}
