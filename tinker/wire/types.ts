// Tinker wire types: the JSON shapes of reference/tinker-protocol.md §A.4 (snake_case, as sent), and the
// plain camelCase values our client API and the local server work with.

/** Token ids, as one chunk of a ModelInput. */
export interface TextChunk {
  type: 'encoded_text';
  tokens: number[];
}

/** An image for a vision model (ImageChunk): base64 bytes, their format, and the positions it takes. */
export interface ImageChunk {
  type: 'image';
  data: string;
  format: 'png' | 'jpeg';
  expected_tokens: number;
}

export type ModelInputChunk = TextChunk | ImageChunk;

/** A prompt: its token ids, or its chunks when it holds images. */
export type PromptInput = number[] | ModelInputChunk[];

/**
 * The token id an image's positions hold in the flat view of a model input (`modelInput`). Only the local
 * trainer reads that view (its models cannot see: an image is that many placeholder positions); the chunks
 * themselves go over the wire.
 */
export const IMAGE_PLACEHOLDER_TOKEN = 0;

/** A training example: token ids, and per-position loss inputs (target_tokens, weights, logprobs, advantages). */
export interface Datum {
  /** Token ids; an image's positions hold IMAGE_PLACEHOLDER_TOKEN. */
  modelInput: number[];
  lossFnInputs: Record<string, number[]>;
  /** The model input as chunks, when it holds images (then `modelInput` is their flat view). */
  chunks?: ModelInputChunk[];
}

export type LossFn = 'cross_entropy' | 'importance_sampling' | 'ppo' | 'cispo' | 'dro';

export interface ForwardBackwardResult {
  lossFnOutputType: string;
  /** One record per datum, in request order; every built-in loss returns `logprobs`. */
  lossFnOutputs: Record<string, number[]>[];
  /** Keys look like `name:reduction`, e.g. `loss:sum`. */
  metrics: Record<string, number>;
}

export type StopReason = 'stop' | 'length';

export interface SampledSequence {
  tokens: number[];
  logprobs: number[] | null;
  stopReason: StopReason;
}

export interface SampleResult {
  sequences: SampledSequence[];
  /** Entry 0 is null; entry i = log p(prompt[i] | prompt[<i]). Null unless requested. */
  promptLogprobs: (number | null)[] | null;
}

export interface AdamParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  gradClipNorm: number;
}

/** The SDK's defaults (the cookbook passes eps 1e-8). */
export const DEFAULT_ADAM: AdamParams = {
  learningRate: 1e-4,
  beta1: 0.9,
  beta2: 0.95,
  eps: 1e-12,
  weightDecay: 0,
  gradClipNorm: 0,
};

export interface SamplingParams {
  maxTokens?: number;
  temperature?: number;
  topK?: number;
  topP?: number;
  stop?: string | string[] | number[];
  seed?: number;
}

// ---- JSON wire shapes ----

export type WireDType = 'int64' | 'float32';

export interface WireTensorData {
  data: number[];
  dtype: WireDType;
  shape?: number[];
}

export interface WireChunk {
  type?: string;
  tokens?: number[];
  [k: string]: unknown;
}

export interface WireModelInput {
  chunks: WireChunk[];
}

export interface WireDatum {
  model_input: WireModelInput;
  loss_fn_inputs: Record<string, WireTensorData>;
}

export interface WireSamplingParams {
  max_tokens?: number | null;
  seed?: number | null;
  stop?: string | string[] | number[] | null;
  temperature?: number;
  top_k?: number;
  top_p?: number;
}

export interface WireAdamParams {
  learning_rate?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weight_decay?: number;
  grad_clip_norm?: number;
}

export interface WireSampleResponse {
  sequences: { tokens: number[]; logprobs?: number[] | null; stop_reason: StopReason }[];
  prompt_logprobs?: (number | null)[] | null;
  type?: 'sample';
}

export interface WireForwardBackwardOutput {
  loss_fn_output_type: string;
  loss_fn_outputs: Record<string, WireTensorData>[];
  metrics: Record<string, number>;
}

export interface UntypedFuture {
  request_id: string;
  model_id?: string;
}

export type FutureError = { error: string; category: 'user' | 'server' | 'unknown' };
export type TryAgain = { type: 'try_again'; request_id: string; queue_state: string };

/** Loss-input keys that are integer tensors; everything else is float32. */
export const INT_KEYS = new Set(['target_tokens']);
