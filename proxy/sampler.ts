// What the proxy needs from a sampler: prompt tokens in, sampled sequences with per-token logprobs out.
// The Tinker client (hosted Tinker or the local trainer) is wired in by tinker-sampler.ts; tests use
// fake-sampler.ts.
import type { ModelInputChunk } from '../chat';

export interface SampleParams {
  numSamples: number;
  maxTokens: number;
  temperature: number;
  /** -1 = disabled. */
  topK: number;
  topP: number;
  /** Renderer stop sequences: strings or token ids, never mixed. */
  stop: string[] | number[];
  seed?: number;
  signal: AbortSignal;
  /**
   * The prompt as chunks when it holds images (vision models); then `prompt` is its flat view, an image's
   * positions holding IMAGE_PLACEHOLDER_TOKEN. A sampler sends these chunks, not the flat view.
   */
  promptChunks?: ModelInputChunk[];
}

export interface SampledSequence {
  /** Generated tokens, including the stop token / stop string tokens that ended them. */
  tokens: number[];
  logprobs: number[];
  stopReason: 'stop' | 'length';
}

export interface Sampler {
  sample(prompt: number[], params: SampleParams): Promise<SampledSequence[]>;
}

/** Where a policy's weights live: a sampler snapshot path (tinker://…) or a base model. */
export type SamplerTarget = { samplerPath: string; baseModel?: undefined } | { baseModel: string; samplerPath?: undefined };

export interface SamplerFactory {
  create(target: SamplerTarget, modelName: string): Promise<Sampler>;
}

/** A sampler failure; `retryable` ones are retried per llmProxyRetryAttempts. */
export class SamplerError extends Error {
  override readonly name = 'SamplerError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status = 502,
  ) {
    super(message);
  }
}
