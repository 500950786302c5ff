// The contract between the local trainer's model (trainer/model/) and its Tinker-compatible HTTP server
// (trainer/server/). The server only speaks wire formats; everything numeric lives behind this interface.
import type { AdamParams } from '../tinker/wire/types';

// The optimizer's hyper-parameters are the client's own (camelCase) AdamParams.
export type { AdamParams };

export type LossFn = 'cross_entropy' | 'importance_sampling' | 'ppo';

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

/** createEngine of ./model, loaded on first call so importing this file (e.g. for UserError) stays cheap and acyclic. */
export const createEngine: typeof import('./model').createEngine = (opts) =>
  (require('./model') as typeof import('./model')).createEngine(opts);
