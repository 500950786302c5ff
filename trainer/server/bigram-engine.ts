// A bigram stand-in behind the Engine interface: logits = W[previous token]. Much faster than the real
// transformer of trainer/model/, for tests that exercise only the protocol (base model `local/bigram`).
// Same loss math (§A.8). Tests of training itself use the real engine.
//
// Hosted stand-ins: the models named in AGL_TRAINER_STAND_IN_MODELS (comma-separated hosted names, e.g.
// Qwen/Qwen3-VL-30B-A3B-Instruct) are served by the same 258x258 weights over token ids folded modulo 258, so a test
// can run a hosted model's renderer and tokenizer end to end against this trainer. It cannot see: an image chunk is
// its placeholder positions. It samples ids 0..255 (single bytes in the tokenizers we know) and, for the two
// classes above, the request's first stop token, so answers end; a token's logprob is its class's.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import {
  LOSSES,
  UserError,
  type AdamParams,
  type BaseModelInfo,
  type Engine,
  type EngineDatum,
  type FrozenWeights,
  type LossFn,
  type SampleParams,
  type SampledSequence,
  type TrainableModel,
} from '../engine';
import { lossFor } from '../model/losses';

const V = 258;
const EOS = 256;
const INFO: BaseModelInfo = {
  name: 'local/bigram',
  maxContextLength: 512,
  tokenizerName: 'local/bytes',
  rendererName: 'role_colon',
  vocabSize: V,
};

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

function logSoftmaxRow(w: Float64Array, row: number, temperature = 1): Float64Array {
  const out = new Float64Array(V);
  let max = -Infinity;
  for (let j = 0; j < V; j++) max = Math.max(max, w[row * V + j] / temperature);
  let sum = 0;
  for (let j = 0; j < V; j++) sum += Math.exp(w[row * V + j] / temperature - max);
  const lse = max + Math.log(sum);
  for (let j = 0; j < V; j++) out[j] = w[row * V + j] / temperature - lse;
  return out;
}

/** The vocabulary a hosted stand-in accepts (any id a real tokenizer has). */
const STAND_IN_VOCAB = 1 << 24;

export function standInModels(env: NodeJS.ProcessEnv = process.env): BaseModelInfo[] {
  return (env.AGL_TRAINER_STAND_IN_MODELS ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n && n !== INFO.name)
    .map((name) => ({ name, maxContextLength: 32768, tokenizerName: name, rendererName: 'role_colon', vocabSize: STAND_IN_VOCAB }));
}

function checkTokens(tokens: number[], fold = false): void {
  const max = fold ? STAND_IN_VOCAB : V;
  for (const t of tokens) if (!Number.isInteger(t) || t < 0 || t >= max) throw new UserError(`token id ${t} is out of vocabulary (0..${max - 1})`);
}

/** The weight row / output class of a token id (the id itself for local/bigram). */
const cls = (t: number): number => t % V;

/** The server checks the inputs a loss needs; called directly, the stand-in fills what is missing (weights 1, the rest 0). */
function withDefaultInputs(lossFn: LossFn, inputs: Record<string, number[]>, n: number): Record<string, number[]> {
  const out = { ...inputs };
  for (const k of LOSSES[lossFn].inputs) out[k] ??= new Array<number>(n).fill(k === 'weights' ? 1 : 0);
  return out;
}

class Frozen implements FrozenWeights {
  constructor(
    readonly w: Float64Array,
    readonly baseModel: string = INFO.name,
  ) {}

  private get fold(): boolean {
    return this.baseModel !== INFO.name;
  }

  sample(prompt: number[], params: SampleParams, numSamples: number): SampledSequence[] {
    checkTokens(prompt, this.fold);
    const rand = rng(params.seed ?? Math.floor(Math.random() * 2 ** 31));
    const out: SampledSequence[] = [];
    const stopIds = new Set((params.stop as unknown[]).filter((s): s is number => typeof s === 'number'));
    for (let n = 0; n < numSamples; n++) {
      const tokens: number[] = [];
      const logprobs: number[] = [];
      let prev = cls(prompt[prompt.length - 1]!);
      let stopReason: 'stop' | 'length' = 'length';
      while (tokens.length < params.maxTokens) {
        const lp = logSoftmaxRow(this.w, prev, params.temperature > 0 ? params.temperature : 1);
        let next = 0;
        if (params.temperature === 0) {
          for (let j = 1; j < V; j++) if (lp[j] > lp[next]) next = j;
        } else {
          let r = rand();
          for (next = 0; next < V - 1; next++) {
            r -= Math.exp(lp[next]);
            if (r <= 0) break;
          }
        }
        const id = this.fold && next >= 256 ? ([...stopIds][0] ?? next) : next;
        tokens.push(id);
        logprobs.push(lp[next]);
        prev = next;
        if (next === EOS || stopIds.has(id)) {
          stopReason = 'stop';
          break;
        }
      }
      out.push({ tokens, logprobs, stopReason });
    }
    return out;
  }

  promptLogprobs(tokens: number[]): (number | null)[] {
    checkTokens(tokens, this.fold);
    return tokens.map((t, i) => (i === 0 ? null : logSoftmaxRow(this.w, cls(tokens[i - 1]!))[cls(t)]!));
  }

  async save(dir: string): Promise<void> {
    await writeAtomic(path.join(dir, 'weights.bin'), Buffer.from(this.w.buffer));
    if (this.fold) await writeAtomic(path.join(dir, 'stand-in.json'), JSON.stringify({ baseModel: this.baseModel }));
  }
}

async function writeAtomic(file: string, data: Buffer | string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(`${file}.tmp`, data);
  await rename(`${file}.tmp`, file);
}

async function readF64(file: string): Promise<Float64Array<ArrayBuffer>> {
  const buf = await readFile(file);
  const copy = new Uint8Array(buf.byteLength);
  copy.set(buf);
  return new Float64Array(copy.buffer);
}

class Model implements TrainableModel {
  w: Float64Array;
  grad = new Float64Array(V * V);
  m = new Float64Array(V * V);
  v = new Float64Array(V * V);
  step = 0;

  constructor(
    seed: number,
    readonly baseModel: string = INFO.name,
  ) {
    const r = rng(seed + 1);
    this.w = new Float64Array(V * V).map(() => (r() - 0.5) * 0.02);
  }

  forwardBackward(data: EngineDatum[], lossFn: LossFn, cfg: Record<string, number> | undefined, forwardOnly: boolean) {
    let loss = 0;
    const outputs: { logprobs: number[] }[] = [];
    const fold = this.baseModel !== INFO.name;
    for (const d of data) {
      checkTokens(d.modelInput, fold);
      const target = d.lossFnInputs.target_tokens;
      if (!target) throw new UserError('loss_fn_inputs.target_tokens is required');
      checkTokens(target, fold);
      const rows = d.modelInput.map((row) => logSoftmaxRow(this.w, cls(row)));
      const lps = rows.map((lpRow, t) => lpRow[cls(target[t]!)]!);
      const value = lossFor(lossFn, lps, withDefaultInputs(lossFn, d.lossFnInputs, lps.length), cfg);
      loss += value.loss;
      if (!forwardOnly) {
        for (let t = 0; t < rows.length; t++) {
          const dLdlp = value.dlp[t];
          if (dLdlp === 0) continue;
          // d lp / d logits = onehot(target) - softmax
          const row = cls(d.modelInput[t]!);
          for (let j = 0; j < V; j++) this.grad[row * V + j] += dLdlp * ((j === cls(target[t]!) ? 1 : 0) - Math.exp(rows[t]![j]!));
        }
      }
      outputs.push({ logprobs: lps });
    }
    return { lossFnOutputs: outputs, metrics: { 'loss:sum': loss } };
  }

  optimStep(p: AdamParams): Record<string, number> {
    this.step++;
    let norm = 0;
    for (const g of this.grad) norm += g * g;
    norm = Math.sqrt(norm);
    const scale = p.gradClipNorm > 0 && norm > p.gradClipNorm ? p.gradClipNorm / norm : 1;
    const bc1 = 1 - p.beta1 ** this.step;
    const bc2 = 1 - p.beta2 ** this.step;
    for (let i = 0; i < this.w.length; i++) {
      const g = this.grad[i] * scale;
      this.m[i] = p.beta1 * this.m[i] + (1 - p.beta1) * g;
      this.v[i] = p.beta2 * this.v[i] + (1 - p.beta2) * g * g;
      this.w[i] -= p.learningRate * ((this.m[i] / bc1) / (Math.sqrt(this.v[i] / bc2) + p.eps) + p.weightDecay * this.w[i]);
    }
    this.grad.fill(0);
    return { 'grad_norm:mean': norm };
  }

  snapshot(): FrozenWeights {
    return new Frozen(this.w.slice(), this.baseModel);
  }

  async saveState(dir: string): Promise<void> {
    await writeAtomic(path.join(dir, 'weights.bin'), Buffer.from(this.w.buffer));
    await writeAtomic(path.join(dir, 'adam-m.bin'), Buffer.from(this.m.buffer));
    await writeAtomic(path.join(dir, 'adam-v.bin'), Buffer.from(this.v.buffer));
    await writeAtomic(path.join(dir, 'step.json'), JSON.stringify({ step: this.step }));
  }

  async loadState(dir: string, withOptimizer: boolean): Promise<void> {
    this.w = await readF64(path.join(dir, 'weights.bin'));
    this.grad.fill(0);
    if (withOptimizer) {
      this.m = await readF64(path.join(dir, 'adam-m.bin'));
      this.v = await readF64(path.join(dir, 'adam-v.bin'));
      this.step = JSON.parse(await readFile(path.join(dir, 'step.json'), 'utf8')).step;
    } else {
      this.m.fill(0);
      this.v.fill(0);
      this.step = 0;
    }
  }

  weightsHash(): string {
    return createHash('sha256').update(Buffer.from(this.w.buffer)).digest('hex');
  }
}

export function createBigramEngine(env: NodeJS.ProcessEnv = process.env): Engine {
  const models = [INFO, ...standInModels(env)];
  const known = (baseModel: string) => {
    if (!models.some((m) => m.name === baseModel)) throw new UserError(`unknown base model ${baseModel}`);
  };
  return {
    baseModels: () => models,
    async createModel(baseModel, opts) {
      known(baseModel);
      return new Model(opts.seed, baseModel);
    },
    async loadFrozen(dir) {
      let baseModel = INFO.name;
      try {
        baseModel = JSON.parse(await readFile(path.join(dir, 'stand-in.json'), 'utf8')).baseModel;
      } catch {
        /* local/bigram weights */
      }
      return new Frozen(await readF64(path.join(dir, 'weights.bin')), baseModel);
    },
    async baseWeights(baseModel) {
      known(baseModel);
      return new Model(0, baseModel).snapshot();
    },
    tokenizer: () => ({
      encode: (text: string) => [...Buffer.from(text, 'utf8')],
      decode: (ids: number[]) => Buffer.from(ids.filter((i) => i < 256)).toString('utf8'),
    }),
  };
}
