// Entry point of the local model: createEngine builds the Engine of trainer/engine.ts on top of the
// tiny GPT (gpt.ts), its losses (losses.ts), AdamW (adamw.ts), sampler (sampler.ts) and base models.
import { quote } from '../../common/front-door';
import { isLossFn, LOSS_FNS, lossFnConfigProblem, UserError } from '../engine';
import type {
  AdamParams, BaseModelInfo, Engine, EngineDatum, FrozenWeights, LossFn, SampleParams, SampledSequence, TrainableModel,
} from '../engine';
import { adamwStep, AdamState, newAdamState } from './adamw';
import { loadOrBuildBase, infoOf, RECIPES, recipeFor } from './base-models';
import { FORMAT, readCheckpoint, sha256, writeCheckpoint } from './checkpoint';
import { Layout, layoutOf, ModelConfig } from './config';
import { runBatch, BatchItem } from './batch';
import { lossFor, validateInputs } from './losses';
import { promptLogprobs, sample } from './sampler';
import { byteTokenizer } from './tokenizer';

export interface CreateEngineOptions {
  /** Base models are cached under `<dataDir>/base-models/<name>/`. */
  dataDir: string;
  /** Progress lines (base-model builds); default silent. */
  log?: (line: string) => void;
}

class Frozen implements FrozenWeights {
  private readonly L: Layout;
  constructor(readonly baseModel: string, private readonly c: ModelConfig, private readonly P: Float64Array) {
    this.L = layoutOf(c);
  }
  sample(prompt: number[], params: SampleParams, numSamples: number): SampledSequence[] {
    return sample(this.c, this.L, this.P, prompt, params, numSamples);
  }
  promptLogprobs(tokens: number[]): (number | null)[] {
    return promptLogprobs(this.c, this.L, this.P, tokens);
  }
  async save(dir: string): Promise<void> {
    await writeCheckpoint(dir, {
      meta: { format: FORMAT, baseModel: this.baseModel, config: this.c, loraRank: 0, hasOptimizer: false, adamStep: 0, weightsSha256: sha256(this.P) },
      params: this.P,
    });
  }
}

function checkAdam(p: AdamParams): void {
  const bad = (k: string, v: unknown) => { throw new UserError(`adam_params.${k} is invalid: ${v}`); };
  if (!Number.isFinite(p.learningRate) || p.learningRate < 0) bad('learning_rate', p.learningRate);
  if (!(p.beta1 >= 0 && p.beta1 < 1)) bad('beta1', p.beta1);
  if (!(p.beta2 >= 0 && p.beta2 < 1)) bad('beta2', p.beta2);
  if (!(p.eps >= 0)) bad('eps', p.eps);
  if (!Number.isFinite(p.weightDecay) || p.weightDecay < 0) bad('weight_decay', p.weightDecay);
  if (!Number.isFinite(p.gradClipNorm) || p.gradClipNorm < 0) bad('grad_clip_norm', p.gradClipNorm);
}

class Trainable implements TrainableModel {
  private readonly L: Layout;
  private readonly G: Float64Array;
  private adam: AdamState;
  constructor(readonly baseModel: string, readonly loraRank: number, private readonly c: ModelConfig, private readonly P: Float64Array) {
    this.L = layoutOf(c);
    this.G = new Float64Array(this.L.size);
    this.adam = newAdamState(this.L.size);
  }

  forwardBackward(data: EngineDatum[], lossFn: LossFn, lossFnConfig: Record<string, number> | undefined, forwardOnly: boolean) {
    if (!isLossFn(lossFn)) throw new UserError(`unknown loss_fn ${quote(lossFn)}; supported: ${LOSS_FNS.join(', ')}`);
    if (!Array.isArray(data)) throw new UserError('data must be a list of datums');
    const c = this.c;
    // Validate everything before touching the gradient accumulator, so a bad request changes nothing.
    data.forEach((d, i) => {
      const n = d?.modelInput?.length ?? 0;
      if (n === 0) throw new UserError(`datum ${i}: model_input is empty`);
      if (n > c.contextLength) throw new UserError(`datum ${i}: model_input has ${n} tokens; the context length is ${c.contextLength}`);
      for (let t = 0; t < n; t++) {
        const x = d.modelInput[t];
        if (!Number.isInteger(x) || x < 0 || x >= c.vocabSize) throw new UserError(`datum ${i}: model_input token ${t} = ${x} is outside the vocabulary (0..${c.vocabSize - 1})`);
      }
      validateInputs(lossFn, n, d.lossFnInputs ?? {}, c.vocabSize, i);
    });
    const configProblem = lossFnConfigProblem(lossFn, lossFnConfig);
    if (configProblem) throw new UserError(configProblem);
    const items: BatchItem[] = data.map((d) => ({
      input: d.modelInput,
      target: d.lossFnInputs.target_tokens,
      loss: (lp: Float64Array) => lossFor(lossFn, lp, d.lossFnInputs, lossFnConfig ?? undefined),
    }));
    const { lps, losses } = runBatch(c, this.L, this.P, items, forwardOnly ? null : this.G);
    const total = losses.reduce((a, x) => a + x, 0);
    return { lossFnOutputs: lps.map((lp) => ({ logprobs: Array.from(lp) })), metrics: { 'loss:sum': total } };
  }

  optimStep(params: AdamParams): Record<string, number> {
    checkAdam(params);
    const { gradNorm } = adamwStep(this.P, this.G, this.adam, params);
    this.G.fill(0);
    return { 'grad_norm:mean': gradNorm };
  }

  snapshot(): FrozenWeights {
    return new Frozen(this.baseModel, this.c, this.P.slice());
  }

  async saveState(dir: string): Promise<void> {
    await writeCheckpoint(dir, {
      meta: {
        format: FORMAT, baseModel: this.baseModel, config: this.c, loraRank: this.loraRank, hasOptimizer: true,
        adamStep: this.adam.step, weightsSha256: sha256(this.P),
      },
      params: this.P, m: this.adam.m, v: this.adam.v,
    });
  }

  async loadState(dir: string, withOptimizer: boolean): Promise<void> {
    const ck = await readCheckpoint(dir, withOptimizer);
    if (ck.meta.baseModel !== this.baseModel || JSON.stringify(ck.meta.config) !== JSON.stringify(this.c)) {
      throw new UserError(`checkpoint ${dir} is of base model ${ck.meta.baseModel}, this model is ${this.baseModel}`);
    }
    if (withOptimizer && !ck.meta.hasOptimizer) throw new UserError(`checkpoint ${dir} has no optimizer state (sampler weights?)`);
    this.P.set(ck.params);
    this.G.fill(0);
    this.adam = withOptimizer && ck.m && ck.v ? { m: ck.m, v: ck.v, step: ck.meta.adamStep } : newAdamState(this.L.size);
  }

  weightsHash(): string {
    return sha256(this.P);
  }
}

export function createEngine(opts: CreateEngineOptions): Engine {
  const bases = new Map<string, Promise<Float64Array>>();
  const base = (name: string): Promise<Float64Array> => {
    const r = recipeFor(name);
    let p = bases.get(name);
    if (!p) {
      p = loadOrBuildBase(opts.dataDir, r, opts.log);
      p.catch(() => bases.delete(name));
      bases.set(name, p);
    }
    return p;
  };
  return {
    baseModels: (): BaseModelInfo[] => RECIPES.map(infoOf),
    async createModel(baseModel, { loraRank, seed: _seed }) {
      if (!Number.isInteger(loraRank) || loraRank < 0) throw new UserError(`lora_rank must be a non-negative integer, got ${loraRank}`);
      const r = recipeFor(baseModel);
      // LoRA is accepted but the whole (tiny) model is trained; starting weights are the base's, so the seed changes nothing.
      return new Trainable(baseModel, loraRank, r.config, (await base(baseModel)).slice());
    },
    async loadFrozen(dir) {
      const ck = await readCheckpoint(dir, false);
      return new Frozen(ck.meta.baseModel, ck.meta.config, ck.params);
    },
    async baseWeights(baseModel) {
      const r = recipeFor(baseModel);
      return new Frozen(baseModel, r.config, await base(baseModel));
    },
    tokenizer(baseModel) {
      recipeFor(baseModel);
      return byteTokenizer;
    },
  };
}
