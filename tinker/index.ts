// The Tinker API client: talks to hosted Tinker or the local trainer (trainer/main.ts) alike, as SDK 0.38 does.
export { ServiceClient, checkTtlSeconds, parseCheckpointPath, type BaseModelCapability, type LoraOptions } from './service-client';
export { TrainingClient, type TrainingInfo, type SaveOptions } from './training-client';
export { SamplingClient, type SampleOptions } from './sampling-client';
export { DEFAULT_BASE_URL, SDK_VERSION, type TinkerClientOptions, type CallOptions } from './config';
export { RequestFailedError, TinkerApiError, TinkerTimeoutError } from './errors';
export { TinkerAuthError } from './auth';
export type { ClientConfig, DynamicConfig } from './client-config';
export type { FinishStatus } from './session';
export type {
  AdamParams,
  Datum,
  ForwardBackwardResult,
  ImageChunk,
  ModelInputChunk,
  PromptInput,
  LossFn,
  SampleResult,
  SampledSequence,
  SamplingParams,
  StopReason,
} from './wire/types';
export { DEFAULT_ADAM, IMAGE_PLACEHOLDER_TOKEN } from './wire/types';
