// Client settings: where the service is, the key (from the environment only), and default deadlines.

export const DEFAULT_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';
export const SDK_VERSION = '0.38.0';

export interface TinkerClientOptions {
  /** The run config's `baseUrl`; default the hosted service. */
  baseUrl?: string;
  /** Default: process.env.TINKER_API_KEY. Never logged. */
  apiKey?: string;
  /** Deadline of one HTTP call (default 60 s). */
  httpTimeoutMs?: number;
  /** Deadline of one queued request from submit to result (default 15 min). */
  futureTimeoutMs?: number;
  /** Total time spent retrying one submit on 408/429/5xx/connection errors (default 5 min). */
  retryBudgetMs?: number;
  /** Session heartbeat period (default 10 s). */
  heartbeatMs?: number;
  /** forward_backward bodies and sample/fwd-bwd results: protobuf (as SDK 0.25+, default) or JSON. */
  wire?: 'proto' | 'json';
  /** Extra tags for create_session. */
  tags?: string[];
  userMetadata?: Record<string, string>;
  /** Sink for warnings (heartbeat failures); default none. */
  log?: (line: string) => void;
}

export interface ResolvedOptions {
  baseUrl: string;
  apiKey: string | undefined;
  httpTimeoutMs: number;
  futureTimeoutMs: number;
  retryBudgetMs: number;
  heartbeatMs: number;
  wire: 'proto' | 'json';
  tags: string[];
  userMetadata: Record<string, string>;
  log: (line: string) => void;
}

export function resolveOptions(o: TinkerClientOptions = {}): ResolvedOptions {
  return {
    baseUrl: (o.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
    apiKey: o.apiKey ?? process.env.TINKER_API_KEY,
    httpTimeoutMs: o.httpTimeoutMs ?? 60_000,
    futureTimeoutMs: o.futureTimeoutMs ?? 15 * 60_000,
    retryBudgetMs: o.retryBudgetMs ?? 5 * 60_000,
    heartbeatMs: o.heartbeatMs ?? 10_000,
    wire: o.wire ?? 'proto',
    tags: o.tags ?? [],
    userMetadata: o.userMetadata ?? {},
    log: o.log ?? (() => undefined),
  };
}

/** Per-call options every client method accepts. */
export interface CallOptions {
  /** Overall deadline of this call, submit to result. */
  timeoutMs?: number;
  signal?: AbortSignal;
}
