// The flags the service hands out at start-up (POST /client/config) and the ones it refreshes
// (POST /client/dynamic_config), with SDK 0.38's defaults (types/client_config_response.py,
// types/client_dynamic_config_response.py). Unknown keys are ignored, as the SDK does.

export interface ClientConfig {
  /** Trade the credential for a short-lived JWT (POST /auth/token) and refresh it. */
  pjwtAuthEnabled: boolean;
  /** With JWT auth: "credential_cmd" makes the exchange use TINKER_CREDENTIAL_CMD's output. */
  credentialDefaultSource: string;
  /** zstd-compress protobuf forward_backward bodies (Content-Encoding: zstd). */
  protoCompressFwdbwd: boolean;
  /** At most this many datums per forward_backward request. */
  fwdbwdMaxChunkLen: number;
  /** At most this many estimated (uncompressed) bytes per forward_backward request. */
  fwdbwdMaxChunkBytesCount: number;
  /** Chunks of one call are submitted at once, the first one last; false: one after another. */
  parallelFwdbwdChunks: boolean;
  /** How long 402 (billing) answers are waited out before a call fails. */
  billingExceptionMaxPauseDurationSec: number;
  /** sample() is submitted once, without the sampling retry handler. */
  sampleNoRetries: boolean;
  /** A SamplingClient attached to an existing session asks POST /join_sampling_session for its clone id. */
  sampleJoinSamplingSession: boolean;
  /** One long-poll of POST /retrieve_futures per sampling session instead of one retrieve_future loop per sample. */
  sampleUseRetrieveFutures: boolean;
}

export interface DynamicConfig {
  refreshIntervalSec: number;
  /** Abandoned samples send POST /cancel_future. */
  sampleCancelEnabled: boolean;
  sampleCancelMaxBatchSize: number;
}

export const DEFAULT_CLIENT_CONFIG: ClientConfig = {
  pjwtAuthEnabled: false,
  credentialDefaultSource: 'api_key',
  protoCompressFwdbwd: false,
  fwdbwdMaxChunkLen: 1024,
  fwdbwdMaxChunkBytesCount: 5_000_000,
  parallelFwdbwdChunks: true,
  billingExceptionMaxPauseDurationSec: 3600,
  sampleNoRetries: false,
  sampleJoinSamplingSession: false,
  sampleUseRetrieveFutures: false,
};

export const DEFAULT_DYNAMIC_CONFIG: DynamicConfig = { refreshIntervalSec: 300, sampleCancelEnabled: false, sampleCancelMaxBatchSize: 64 };

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Each field from its snake_case key when the value has the default's type (numbers: positive, whole). */
function parseFlags<T extends object>(body: Record<string, unknown>, defaults: T): T {
  const out: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
  for (const [key, d] of Object.entries(defaults)) {
    const v = body[snake(key)];
    if (typeof v !== typeof d) continue;
    if (typeof v === 'number') {
      if (Number.isFinite(v) && v > 0) out[key] = Math.floor(v);
    } else out[key] = v;
  }
  return out as T;
}

export const parseClientConfig = (body: Record<string, unknown>): ClientConfig => parseFlags(body, DEFAULT_CLIENT_CONFIG);
export const parseDynamicConfig = (body: Record<string, unknown>): DynamicConfig => parseFlags(body, DEFAULT_DYNAMIC_CONFIG);
