// Client settings: where the service is, the credential (from the environment only), session fields and default
// deadlines. Defaults follow SDK 0.38: TINKER_BASE_URL, TINKER_API_KEY, TINKER_CREDENTIAL_CMD, TINKER_PROJECT_ID,
// TINKER_TAGS, CLOUDFLARE_ACCESS_CLIENT_ID / _SECRET.

import type { EngineProfile } from './engine-profile';

export const DEFAULT_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';
export const SDK_VERSION = '0.38.0';

export interface TinkerClientOptions {
  /** The run config's `baseUrl`; default TINKER_BASE_URL, else the hosted service. */
  baseUrl?: string;
  /** Default: process.env.TINKER_API_KEY. Never logged. */
  apiKey?: string;
  /** A shell command printing a credential; default process.env.TINKER_CREDENTIAL_CMD. */
  credentialCmd?: string;
  /** create_session's project_id; default process.env.TINKER_PROJECT_ID. */
  projectId?: string;
  /** create_session's display_name. */
  displayName?: string;
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
  /** create_session's tags; default TINKER_TAGS split on commas (deduplicated). */
  tags?: string[];
  userMetadata?: Record<string, string>;
  /** Sink for warnings and the session's messages; default none. */
  log?: (line: string) => void;
  /** Pause between retries of a 402 (billing) answer; the SDK's 5 s (tests shorten it). */
  billingPauseMs?: number;
  /**
   * What the engine serves, when known without asking (tinker/engine-profile.ts); default: hosted Tinker's URL is
   * SDK 0.38 whole, any other server is asked once (GET /openapi.json).
   */
  profile?: EngineProfile;
}

export interface ResolvedOptions {
  baseUrl: string;
  apiKey: string | undefined;
  credentialCmd: string | undefined;
  projectId: string | undefined;
  displayName: string | undefined;
  extraHeaders: Record<string, string>;
  billingPauseMs: number;
  httpTimeoutMs: number;
  futureTimeoutMs: number;
  retryBudgetMs: number;
  heartbeatMs: number;
  wire: 'proto' | 'json';
  tags: string[];
  userMetadata: Record<string, string>;
  log: (line: string) => void;
  profile: EngineProfile | undefined;
}

/** Hosted Tinker, which is known to speak SDK 0.38 (and is never asked for an OpenAPI document). */
export function isHostedTinkerUrl(url: string): boolean {
  try {
    return url.replace(/\/+$/, '') === DEFAULT_BASE_URL || /(^|\.)thinkingmachines\.(dev|ai)$/.test(new URL(url).hostname);
  } catch {
    return false;
  }
}

export function resolveOptions(o: TinkerClientOptions = {}): ResolvedOptions {
  const env = process.env;
  const extraHeaders: Record<string, string> = {};
  if (env.CLOUDFLARE_ACCESS_CLIENT_ID) extraHeaders['cf-access-client-id'] = env.CLOUDFLARE_ACCESS_CLIENT_ID;
  if (env.CLOUDFLARE_ACCESS_CLIENT_SECRET) extraHeaders['cf-access-client-secret'] = env.CLOUDFLARE_ACCESS_CLIENT_SECRET;
  return {
    baseUrl: (o.baseUrl ?? (env.TINKER_BASE_URL || DEFAULT_BASE_URL)).replace(/\/+$/, ''),
    apiKey: o.apiKey ?? (env.TINKER_API_KEY || undefined),
    credentialCmd: o.credentialCmd ?? (env.TINKER_CREDENTIAL_CMD || undefined),
    projectId: o.projectId ?? (env.TINKER_PROJECT_ID || undefined),
    displayName: o.displayName,
    extraHeaders,
    billingPauseMs: o.billingPauseMs ?? 5_000,
    httpTimeoutMs: o.httpTimeoutMs ?? 60_000,
    futureTimeoutMs: o.futureTimeoutMs ?? 15 * 60_000,
    retryBudgetMs: o.retryBudgetMs ?? 5 * 60_000,
    heartbeatMs: o.heartbeatMs ?? 10_000,
    wire: o.wire ?? 'proto',
    tags: o.tags ?? (env.TINKER_TAGS !== undefined ? [...new Set(env.TINKER_TAGS.split(','))] : []),
    userMetadata: o.userMetadata ?? {},
    log: o.log ?? (() => undefined),
    profile: o.profile,
  };
}

/** Per-call options every client method accepts. */
export interface CallOptions {
  /** Overall deadline of this call, submit to result. */
  timeoutMs?: number;
  signal?: AbortSignal;
}
