// The contract between the local trainer's model (trainer/model/) and its Tinker-compatible HTTP server
// (trainer/server/). The server only speaks wire formats; everything numeric lives behind this interface.
import type { AdamParams } from '../tinker/wire/types';

// The optimizer's hyper-parameters are the client's own (camelCase) AdamParams.
export type { AdamParams };

export type LossFn = 'cross_entropy' | 'importance_sampling' | 'ppo' | 'cispo' | 'dro';

/**
 * Each built-in loss (tinker-protocol.md §A.8): the loss_fn_inputs it needs, and the loss_fn_config keys it reads
 * (the Tinker SDK's names). ppo and cispo also take per-token clip thresholds as optional loss_fn_inputs.
 */
export const LOSSES: Record<LossFn, { inputs: readonly string[]; config: readonly string[] }> = {
  cross_entropy: { inputs: ['target_tokens', 'weights'], config: [] },
  importance_sampling: { inputs: ['target_tokens', 'logprobs', 'advantages'], config: [] },
  ppo: { inputs: ['target_tokens', 'logprobs', 'advantages'], config: ['clip_low_threshold', 'clip_high_threshold'] },
  cispo: { inputs: ['target_tokens', 'logprobs', 'advantages'], config: ['clip_low_threshold', 'clip_high_threshold'] },
  dro: { inputs: ['target_tokens', 'logprobs', 'advantages'], config: ['beta'] },
};

export const LOSS_FNS = Object.keys(LOSSES) as LossFn[];

export function isLossFn(x: unknown): x is LossFn {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(LOSSES, x);
}

/** Why `config` does not fit `lossFn` (a key it does not read, or a value that is not a finite number), or null. */
export function lossFnConfigProblem(lossFn: LossFn, config: Record<string, unknown> | undefined): string | null {
  const allowed = LOSSES[lossFn].config;
  for (const [k, v] of Object.entries(config ?? {})) {
    if (!allowed.includes(k)) {
      return `loss_fn_config.${k} is not a setting of ${lossFn}; ` +
        (allowed.length ? `${lossFn} takes ${allowed.join(', ')}` : `${lossFn} takes no loss_fn_config`);
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) return `loss_fn_config.${k} must be a finite number`;
  }
  return null;
}

/** One Tinker Datum, already decoded from JSON or protobuf. */
export interface EngineDatum {
  /** Token ids of all chunks, concatenated. */
  modelInput: number[];
  /** target_tokens (ints), weights, logprobs, advantages (floats), each as long as modelInput. */
  lossFnInputs: Record<string, number[]>;
}

export interface SampleParams {
  maxTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  /** Stop token ids or stop strings; the returned tokens include the stop. */
  stop: number[] | string[];
  seed?: number;
}

export interface SampledSequence {
  tokens: number[];
  logprobs: number[];
  stopReason: 'stop' | 'length';
}

export interface BaseModelInfo {
  name: string;
  maxContextLength: number;
  tokenizerName: string;
  rendererName: string;
  vocabSize: number;
}

/** Mutable weights, optimizer state and accumulated gradients. */
export interface TrainableModel {
  readonly baseModel: string;
  forwardBackward(
    data: EngineDatum[],
    lossFn: LossFn,
    lossFnConfig: Record<string, number> | undefined,
    forwardOnly: boolean,
  ): { lossFnOutputs: { logprobs: number[] }[]; metrics: Record<string, number> };
  /** Applies the accumulated gradients and zeroes them. */
  optimStep(params: AdamParams): Record<string, number>;
  /** A frozen copy of the current weights, for sampling. */
  snapshot(): FrozenWeights;
  /** Weights + optimizer state, written atomically. */
  saveState(dir: string): Promise<void>;
  loadState(dir: string, withOptimizer: boolean): Promise<void>;
  /** sha256 of the weights' bytes; determinism tests compare these. */
  weightsHash(): string;
}

export interface FrozenWeights {
  readonly baseModel: string;
  sample(prompt: number[], params: SampleParams, numSamples: number): SampledSequence[];
  /** [null, lp(t1|t0), lp(t2|t0 t1), ...] */
  promptLogprobs(tokens: number[]): (number | null)[];
  save(dir: string): Promise<void>;
}

export interface Engine {
  baseModels(): BaseModelInfo[];
  /** Builds (or loads the cached) base checkpoint under dataDir on first use. */
  createModel(baseModel: string, opts: { loraRank: number; seed: number }): Promise<TrainableModel>;
  loadFrozen(dir: string): Promise<FrozenWeights>;
  baseWeights(baseModel: string): Promise<FrozenWeights>;
  tokenizer(baseModel: string): { encode(text: string): number[]; decode(ids: number[]): string };
}

/** Bad input from a caller; the server answers it as {"error", "category": "user"}. */
export class UserError extends Error {
  override readonly name = 'UserError';
}
