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

const bool = (v: unknown, d: boolean) => (typeof v === 'boolean' ? v : d);
const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : d);
const str = (v: unknown, d: string) => (typeof v === 'string' ? v : d);

export function parseClientConfig(body: Record<string, unknown>): ClientConfig {
  const d = DEFAULT_CLIENT_CONFIG;
  return {
    pjwtAuthEnabled: bool(body.pjwt_auth_enabled, d.pjwtAuthEnabled),
    credentialDefaultSource: str(body.credential_default_source, d.credentialDefaultSource),
    protoCompressFwdbwd: bool(body.proto_compress_fwdbwd, d.protoCompressFwdbwd),
    fwdbwdMaxChunkLen: int(body.fwdbwd_max_chunk_len, d.fwdbwdMaxChunkLen),
    fwdbwdMaxChunkBytesCount: int(body.fwdbwd_max_chunk_bytes_count, d.fwdbwdMaxChunkBytesCount),
    parallelFwdbwdChunks: bool(body.parallel_fwdbwd_chunks, d.parallelFwdbwdChunks),
    billingExceptionMaxPauseDurationSec: int(body.billing_exception_max_pause_duration_sec, d.billingExceptionMaxPauseDurationSec),
    sampleNoRetries: bool(body.sample_no_retries, d.sampleNoRetries),
    sampleJoinSamplingSession: bool(body.sample_join_sampling_session, d.sampleJoinSamplingSession),
    sampleUseRetrieveFutures: bool(body.sample_use_retrieve_futures, d.sampleUseRetrieveFutures),
  };
}

export function parseDynamicConfig(body: Record<string, unknown>): DynamicConfig {
  const d = DEFAULT_DYNAMIC_CONFIG;
  return {
    refreshIntervalSec: int(body.refresh_interval_sec, d.refreshIntervalSec),
    sampleCancelEnabled: bool(body.sample_cancel_enabled, d.sampleCancelEnabled),
    sampleCancelMaxBatchSize: int(body.sample_cancel_max_batch_size, d.sampleCancelMaxBatchSize),
  };
}
