// A Tinker session, started in SDK 0.38's order (lib/internal_client_holder.py): POST /client/config; the
// credential set up from its flags (a raw key, or a JWT traded for it); POST /client/dynamic_config (404 =
// defaults, re-fetched every refresh_interval_sec); POST /create_session; then a heartbeat every 10 s until the
// service answers 410 (the session has finished). close() finishes it: POST /sessions/{id}/finish. Timers are
// unref'd so they never keep a process alive.
import { ApiKeyAuth, JwtAuth, MISSING_API_KEY_MESSAGE, NoAuth, TinkerAuthError, resolveAuth, type AuthProvider } from './auth';
import { DEFAULT_DYNAMIC_CONFIG, parseClientConfig, parseDynamicConfig, type ClientConfig, type DynamicConfig } from './client-config';
import { SDK_VERSION, type ResolvedOptions } from './config';
import { TinkerApiError } from './errors';
import type { TinkerHttp } from './http';
import { BillingPause } from './retry-rules';

export type FinishStatus = 'success' | 'errored' | 'interrupted';

const HEARTBEAT_WARN_MS = 120_000;
const MIN_REFRESH_S = 10;

/** Reads client/config and sets the session's credential from it. */
export async function startClient(http: TinkerHttp, opts: ResolvedOptions): Promise<ClientConfig> {
  const sources = { apiKey: opts.apiKey, credentialCmd: opts.credentialCmd };
  const config = parseClientConfig(
    await http.postJson('/client/config', { sdk_version: SDK_VERSION }, { auth: resolveAuth(sources, false), retry: 'both' }),
  );
  http.billing = new BillingPause(() => config.billingExceptionMaxPauseDurationSec, opts.log);
  http.auth = sessionAuth(http, opts, config);
  return config;
}

function sessionAuth(http: TinkerHttp, opts: ResolvedOptions, config: ClientConfig): AuthProvider {
  if (!config.pjwtAuthEnabled) {
    // Without JWT exchange the service takes API keys only.
    if (opts.apiKey) return new ApiKeyAuth(opts.apiKey);
    if (opts.credentialCmd) throw new TinkerAuthError(MISSING_API_KEY_MESSAGE);
    return new NoAuth();
  }
  const exchangeAuth = resolveAuth({ apiKey: opts.apiKey, credentialCmd: opts.credentialCmd }, config.credentialDefaultSource === 'credential_cmd');
  return new JwtAuth(
    async () => {
      const r = await http.postJson<{ jwt?: unknown }>('/auth/token', {}, { auth: exchangeAuth });
      if (typeof r.jwt !== 'string') throw new TinkerAuthError('auth/token answered without a jwt');
      return r.jwt;
    },
    (err) => err instanceof TinkerApiError && (err.status === 401 || err.status === 403),
    opts.log,
  );
}

export class Session {
  private heartbeat: NodeJS.Timeout | undefined;
  private refresh: NodeJS.Timeout | undefined;
  private lastBeat = performance.now();
  private modelSeq = 0;
  private samplingSeq = 0;
  private finished = false;

  private constructor(
    private readonly http: TinkerHttp,
    readonly id: string,
    private readonly opts: ResolvedOptions,
    readonly config: ClientConfig,
    public dynamic: DynamicConfig,
  ) {}

  /** After startClient: dynamic_config, create_session, heartbeats. */
  static async create(http: TinkerHttp, opts: ResolvedOptions, config: ClientConfig): Promise<Session> {
    const dynamic = await fetchDynamicConfig(http, true);
    const res = await http.postJson<{ session_id?: unknown; info_message?: string; warning_message?: string; error_message?: string }>('/create_session', {
      tags: opts.tags,
      user_metadata: opts.userMetadata,
      sdk_version: SDK_VERSION,
      ...(opts.projectId ? { project_id: opts.projectId } : {}),
      ...(opts.displayName ? { display_name: opts.displayName } : {}),
      type: 'create_session',
    });
    if (typeof res.session_id !== 'string') throw new Error('create_session answered without a session_id');
    // The service's messages are shown, never raised (an error_message does not stop the session).
    for (const [level, text] of [['info', res.info_message], ['warning', res.warning_message], ['error', res.error_message]] as const) {
      if (typeof text === 'string' && text) opts.log(`tinker ${level}: ${text}`);
    }
    const session = new Session(http, res.session_id, opts, config, dynamic ?? DEFAULT_DYNAMIC_CONFIG);
    session.scheduleHeartbeat();
    session.scheduleRefresh();
    return session;
  }

  nextModelSeqId(): number {
    return this.modelSeq++;
  }

  nextSamplingSeqId(): number {
    return this.samplingSeq++;
  }

  private scheduleHeartbeat(): void {
    this.heartbeat = setTimeout(() => void this.beat(), this.opts.heartbeatMs).unref();
  }

  private async beat(): Promise<void> {
    let failure = '';
    try {
      await this.http.call({ method: 'POST', path: '/session_heartbeat', body: { session_id: this.id, type: 'session_heartbeat' }, timeoutMs: 10_000, retry: 'none' });
      this.lastBeat = performance.now();
    } catch (err) {
      if (err instanceof TinkerApiError && err.status === 410) {
        this.opts.log(`tinker: session ${this.id} has finished; stopping its heartbeat`);
        return this.stopTimers();
      }
      failure = (err as Error).message;
    }
    const silent = performance.now() - this.lastBeat;
    if (silent > HEARTBEAT_WARN_MS) {
      this.opts.log(`tinker: session heartbeat failed for ${Math.round(silent / 1000)} s for session ${this.id} (${failure}); if this persists, the session will be terminated`);
    }
    if (this.heartbeat) this.scheduleHeartbeat();
  }

  private scheduleRefresh(): void {
    const ms = Math.max(this.dynamic.refreshIntervalSec, MIN_REFRESH_S) * 1000;
    this.refresh = setTimeout(async () => {
      // Failures keep the last values.
      this.dynamic = (await fetchDynamicConfig(this.http, false).catch(() => undefined)) ?? this.dynamic;
      if (this.refresh) this.scheduleRefresh();
    }, ms).unref();
  }

  /** Marks the session finished on the service (first reason wins), then stops the heartbeat and the JWT refresh. */
  async finish(status: FinishStatus, detail: string | undefined, deadline: number): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    try {
      await this.http.call({
        method: 'POST',
        path: `/sessions/${this.id}/finish`,
        body: { reason: { type: status }, detail: detail ?? null },
        retry: 'both',
        deadline,
        sdkMethod: 'ServiceClient.close',
      });
    } finally {
      this.stopTimers();
      this.http.auth.close?.();
    }
  }

  /** Stops the timers without telling the service (the session then ends when its heartbeats stop). */
  stopTimers(): void {
    if (this.heartbeat) clearTimeout(this.heartbeat);
    if (this.refresh) clearTimeout(this.refresh);
    this.heartbeat = undefined;
    this.refresh = undefined;
  }
}

/** client/dynamic_config: the start-up fetch is retried and a 404 means defaults; refreshes are one try. */
async function fetchDynamicConfig(http: TinkerHttp, initial: boolean): Promise<DynamicConfig | undefined> {
  try {
    const body = await http.postJson('/client/dynamic_config', { sdk_version: SDK_VERSION }, { timeoutMs: 10_000, retry: initial ? 'holder' : 'none' });
    return parseDynamicConfig(body);
  } catch (err) {
    if (initial && err instanceof TinkerApiError && err.status === 404) return undefined;
    throw err;
  }
}
