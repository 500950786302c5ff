// StoreClient: a typed client of the LightningStore wire protocol (works against this server and the Python
// `agl store`). Every call has a deadline. Retries happen on transient failures only (connection refused/reset,
// 5xx, 408), and only for calls that are safe to repeat: reads, updates, keyed creates. Enqueue always carries an
// idempotency key (one is generated when the caller gives none), so its retries never create a second rollout
// on this server.
import { randomUUID } from 'node:crypto';
import type {
  Attempt, AttemptedRollout, EnqueueRolloutRequest, Json, JsonObject, NamedResources, PaginatedResult, Pagination,
  QueryResourcesRequest, QueryRolloutsRequest, QuerySpansRequest, QueryWorkersRequest, ResourcesUpdate, Rollout,
  RolloutConfig, RolloutMode, Span, StoreStatistics, UpdateAttemptRequest, UpdateRolloutRequest, Worker,
} from './types';
import { isTerminalRolloutStatus } from './types';
import type { RunRecord, RunRecordInput, RunRecordQuery } from './run-records';
import { httpRequest } from '../common/http-transport';

export class StoreHttpError extends Error {
  override readonly name = 'StoreHttpError';
  constructor(readonly status: number, readonly url: string, readonly body: string) {
    super(`store answered HTTP ${status} for ${url}: ${body.slice(0, 500)}`);
  }
}

export interface StoreClientOptions {
  /** Default per-call deadline (ms). */
  timeoutMs?: number;
  /** Pauses before each retry (ms); its length is the number of retries. */
  retryDelaysMs?: number[];
  /** Bearer token; defaults to $AGL_STORE_TOKEN. */
  token?: string;
}

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Routing of a dequeue (see store/rollout-ops.ts DequeueFilter). */
export interface DequeueRouting {
  /** Take only rollouts routed to this agent (their metadata's `agl_agent`); without it, only unrouted ones. */
  agent?: string | null;
  /** Take only rollouts whose idempotency key starts with this. */
  keyPrefix?: string | null;
}

export interface EnqueueOptions extends CallOptions {
  mode?: RolloutMode | null;
  resourcesId?: string | null;
  config?: Partial<RolloutConfig> | null;
  metadata?: JsonObject | null;
  /** A repeated enqueue with the same key returns the rollout the first one created. */
  idempotencyKey?: string;
}

type Retry = 'always' | 'connect-only';

interface RequestSpec extends CallOptions {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  query?: Record<string, string | number | string[] | null | undefined>;
  headers?: Record<string, string>;
  retry: Retry;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Network failures where the request surely never reached the server. */
function isConnectFailure(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } })?.cause?.code ?? (err as { code?: string })?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

function isTransientNetworkFailure(err: unknown): boolean {
  if (isConnectFailure(err)) return true;
  const code = (err as { cause?: { code?: string } })?.cause?.code ?? (err as { code?: string })?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

export class StoreClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly retryDelaysMs: number[];
  private readonly token: string | undefined;

  constructor(serverUrl: string, options: StoreClientOptions = {}) {
    this.baseUrl = serverUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [250, 1000, 2500];
    this.token = options.token ?? (process.env.AGL_STORE_TOKEN || undefined);
  }

  private async request<T>(spec: RequestSpec): Promise<T> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(item));
    }
    const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    for (let attempt = 0; ; attempt++) {
      const delay = this.retryDelaysMs[attempt];
      try {
        const res = await httpRequest(url, { method: spec.method, headers, body, timeoutMs: spec.timeoutMs ?? this.timeoutMs, signal: spec.signal });
        if (res.status >= 200 && res.status < 300) return (res.text === '' ? null : JSON.parse(res.text)) as T;
        const error = new StoreHttpError(res.status, `${spec.method} ${url.pathname}`, res.text);
        if (spec.retry === 'always' && (res.status >= 500 || res.status === 408) && delay !== undefined) {
          await sleep(delay);
          continue;
        }
        throw error;
      } catch (err) {
        if (err instanceof StoreHttpError || spec.signal?.aborted) throw err;
        const retriable = spec.retry === 'always' ? isTransientNetworkFailure(err) : isConnectFailure(err);
        if (!retriable || delay === undefined) throw err;
        await sleep(delay);
      }
    }
  }

  private get<T>(path: string, opts: CallOptions = {}, query?: RequestSpec['query']): Promise<T> {
    return this.request<T>({ method: 'GET', path, query, retry: 'always', ...opts });
  }

  private post<T>(path: string, body: unknown, opts: CallOptions & { retry?: Retry; headers?: Record<string, string> } = {}): Promise<T> {
    return this.request<T>({ method: 'POST', path, body, retry: opts.retry ?? 'always', ...opts });
  }

  // ------------------------------------------------------------------ health / stats

  async health(opts: CallOptions = {}): Promise<boolean> {
    try {
      const res = await this.request<{ status: string }>({ method: 'GET', path: '/v1/agl/health', retry: 'connect-only', timeoutMs: 5000, ...opts });
      return res?.status === 'ok';
    } catch {
      return false;
    }
  }

  statistics(opts?: CallOptions): Promise<StoreStatistics> {
    return this.get('/v1/agl/statistics', opts);
  }

  // ------------------------------------------------------------------ rollouts (algorithm side)

  async enqueueRollout(input: Json, opts: EnqueueOptions = {}): Promise<Rollout> {
    const key = opts.idempotencyKey ?? randomUUID();
    const metadata = opts.idempotencyKey ? { ...(opts.metadata ?? {}), idempotency_key: opts.idempotencyKey } : (opts.metadata ?? null);
    const request: EnqueueRolloutRequest = {
      input, mode: opts.mode ?? null, resources_id: opts.resourcesId ?? null, config: opts.config ?? null, metadata,
    };
    const [rollout] = await this.post<Rollout[]>('/v1/agl/queues/rollouts/enqueue', { rollouts: [request] },
      { ...opts, headers: { 'idempotency-key': key } });
    if (!rollout) throw new Error('store returned no rollout for enqueue');
    return rollout;
  }

  /** Enqueues many rollouts in one request. Give each a `metadata.idempotency_key` to make retries of the batch safe. */
  enqueueRollouts(requests: EnqueueRolloutRequest[], opts: CallOptions & { idempotencyKey?: string } = {}): Promise<Rollout[]> {
    if (requests.length === 0) return Promise.resolve([]);
    const key = opts.idempotencyKey ?? randomUUID();
    return this.post('/v1/agl/queues/rollouts/enqueue', { rollouts: requests }, { ...opts, headers: { 'idempotency-key': key } });
  }

  startRollout(input: Json, opts: EnqueueOptions & { workerId?: string | null } = {}): Promise<AttemptedRollout> {
    const body = {
      input, mode: opts.mode ?? null, resources_id: opts.resourcesId ?? null, config: opts.config ?? null,
      metadata: opts.metadata ?? null, worker_id: opts.workerId ?? null,
    };
    const headers: Record<string, string> = opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {};
    return this.post('/v1/agl/rollouts', body, { ...opts, headers, retry: opts.idempotencyKey ? 'always' : 'connect-only' });
  }

  getRolloutById(rolloutId: string, opts?: CallOptions): Promise<Rollout | AttemptedRollout | null> {
    return this.get(`/v1/agl/rollouts/${encodeURIComponent(rolloutId)}`, opts);
  }

  queryRollouts(query: QueryRolloutsRequest = {}, opts?: CallOptions): Promise<PaginatedResult<Rollout | AttemptedRollout>> {
    return this.post('/v1/agl/rollouts/search', { limit: -1, offset: 0, filter_logic: 'and', ...query }, opts);
  }

  updateRollout(rolloutId: string, update: UpdateRolloutRequest, opts?: CallOptions): Promise<Rollout> {
    return this.post(`/v1/agl/rollouts/${encodeURIComponent(rolloutId)}`, update, opts);
  }

  /**
   * Rollouts among `rolloutIds` that are finished, waiting server-side up to `timeoutSec` (capped by the server,
   * 25 s on ours) for the rest. Returns as soon as all are finished.
   */
  waitForRollouts(rolloutIds: string[], timeoutSec: number, opts: CallOptions = {}): Promise<Rollout[]> {
    return this.post('/v1/agl/waits/rollouts', { rollout_ids: rolloutIds, timeout: timeoutSec },
      { timeoutMs: timeoutSec * 1000 + 15_000, ...opts });
  }

  /**
   * Repeats waitForRollouts until every rollout finished or `deadlineSec` passed; returns the finished ones.
   */
  async waitForAllRollouts(rolloutIds: string[], deadlineSec = Infinity, opts: CallOptions & { pollSec?: number } = {}): Promise<Rollout[]> {
    const deadline = Date.now() + deadlineSec * 1000;
    const done = new Map<string, Rollout>();
    while (done.size < rolloutIds.length) {
      const left = rolloutIds.filter((id) => !done.has(id));
      const remaining = (deadline - Date.now()) / 1000;
      if (remaining <= 0) break;
      const finished = await this.waitForRollouts(left, Math.min(opts.pollSec ?? 20, remaining), opts);
      for (const r of finished) if (isTerminalRolloutStatus(r.status)) done.set(r.rollout_id, r);
    }
    return rolloutIds.filter((id) => done.has(id)).map((id) => done.get(id)!);
  }

  // ------------------------------------------------------------------ rollouts (runner side)

  async dequeueRollout(workerId?: string | null, opts?: CallOptions & DequeueRouting): Promise<AttemptedRollout | null> {
    const [first] = await this.dequeueRollouts(1, workerId, opts);
    return first ?? null;
  }

  /** Not retried once the request may have reached the server: a lost answer must not dequeue twice. */
  dequeueRollouts(limit: number, workerId?: string | null, opts?: CallOptions & DequeueRouting): Promise<AttemptedRollout[]> {
    const body: { limit: number; worker_id?: string; agent?: string; key_prefix?: string } = { limit };
    if (workerId) body.worker_id = workerId;
    if (opts?.agent) body.agent = opts.agent;
    if (opts?.keyPrefix) body.key_prefix = opts.keyPrefix;
    return this.post('/v1/agl/queues/rollouts/dequeue', body, { timeoutMs: opts?.timeoutMs, signal: opts?.signal, retry: 'connect-only' });
  }

  startAttempt(rolloutId: string, workerId?: string | null, opts?: CallOptions): Promise<AttemptedRollout> {
    return this.post(`/v1/agl/rollouts/${encodeURIComponent(rolloutId)}/attempts`, workerId ? { worker_id: workerId } : null,
      { ...opts, retry: 'connect-only' });
  }

  queryAttempts(rolloutId: string, p: Pagination = {}, opts?: CallOptions): Promise<PaginatedResult<Attempt>> {
    return this.post(`/v1/agl/rollouts/${encodeURIComponent(rolloutId)}/attempts/search`,
      { limit: -1, offset: 0, sort_by: 'sequence_id', sort_order: 'asc', ...p }, opts);
  }

  getLatestAttempt(rolloutId: string, opts?: CallOptions): Promise<Attempt | null> {
    return this.get(`/v1/agl/rollouts/${encodeURIComponent(rolloutId)}/attempts/latest`, opts);
  }

  updateAttempt(rolloutId: string, attemptId: string | 'latest', update: UpdateAttemptRequest, opts?: CallOptions): Promise<Attempt> {
    return this.post(`/v1/agl/rollouts/${encodeURIComponent(rolloutId)}/attempts/${encodeURIComponent(attemptId)}`, update, opts);
  }

  // ------------------------------------------------------------------ spans

  querySpans(rolloutId: string, attemptId: string | 'latest' | null = null,
    filters: Omit<QuerySpansRequest, 'rollout_id' | 'attempt_id'> = {}, opts?: CallOptions): Promise<PaginatedResult<Span>> {
    const body: Record<string, unknown> = {
      rollout_id: rolloutId, limit: -1, offset: 0, filter_logic: 'and', sort_by: 'sequence_id', sort_order: 'asc', ...filters,
    };
    if (attemptId !== null) body.attempt_id = attemptId;
    return this.post('/v1/agl/spans/search', body, opts);
  }

  async getNextSpanSequenceId(rolloutId: string, attemptId: string, opts?: CallOptions): Promise<number> {
    const res = await this.post<{ sequence_id: number }>('/v1/agl/spans/next', { rollout_id: rolloutId, attempt_id: attemptId },
      { ...opts, retry: 'always' }); // a retry may skip a number; ids only need to increase
    return res.sequence_id;
  }

  /** Adds a span; `null` when a span with the same (rollout, attempt, span id) exists (so retries are safe). */
  addSpan(span: Span, opts?: CallOptions): Promise<Span | null> {
    return this.post('/v1/agl/spans', span, opts);
  }

  // ------------------------------------------------------------------ resources

  addResources(resources: NamedResources, opts: CallOptions & { idempotencyKey?: string } = {}): Promise<ResourcesUpdate> {
    const headers: Record<string, string> = opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {};
    return this.post('/v1/agl/resources', resources, { ...opts, headers, retry: opts.idempotencyKey ? 'always' : 'connect-only' });
  }

  updateResources(resourcesId: string, resources: NamedResources, opts?: CallOptions): Promise<ResourcesUpdate> {
    return this.post(`/v1/agl/resources/${encodeURIComponent(resourcesId)}`, resources, opts);
  }

  getResourcesById(resourcesId: string, opts?: CallOptions): Promise<ResourcesUpdate | null> {
    return this.get(`/v1/agl/resources/${encodeURIComponent(resourcesId)}`, opts);
  }

  getLatestResources(opts?: CallOptions): Promise<ResourcesUpdate | null> {
    return this.get('/v1/agl/resources/latest', opts);
  }

  queryResources(q: QueryResourcesRequest = {}, opts?: CallOptions): Promise<PaginatedResult<ResourcesUpdate>> {
    return this.get('/v1/agl/resources', opts, { limit: -1, offset: 0, ...q } as RequestSpec['query']);
  }

  // ------------------------------------------------------------------ a training run's records (ours)

  /** Writes records, each unless its (kind, step, key) exists; returns the one that stands for each. Safe to retry. */
  putRunRecords(run: string, records: RunRecordInput[], opts?: CallOptions): Promise<RunRecord[]> {
    return this.post(`/v1/agl/runs/${encodeURIComponent(run)}/records`, { records }, opts);
  }

  /** One page (by seq, up to 1,000) of a run's records of one kind. */
  runRecords(run: string, q: RunRecordQuery, opts?: CallOptions): Promise<RunRecord[]> {
    return this.post(`/v1/agl/runs/${encodeURIComponent(run)}/records/search`, q, opts);
  }

  /** Removes the run's finished rollouts (attempts, spans) of batches below `beforeBatch` (retention.ts). */
  pruneRun(run: string, beforeBatch: number, opts?: CallOptions): Promise<{ rollouts: number; spans: number; resources: number; stepRecords: number }> {
    return this.post(`/v1/agl/runs/${encodeURIComponent(run)}/prune`, { before_batch: beforeBatch }, opts);
  }

  /** The store's health, with its disk use (retention.ts DiskUse). */
  healthDetail(opts?: CallOptions): Promise<{ status: string; disk?: { db_bytes: number; wal_bytes: number; free_bytes: number; auto_vacuum: string } }> {
    return this.get('/v1/agl/health', opts);
  }

  /** Every run with records: per run and kind, how many and the last step. */
  runsWithRecords(opts?: CallOptions): Promise<{ run: string; kind: string; count: number; last_step: number }[]> {
    return this.get('/v1/agl/runs', opts);
  }

  // ------------------------------------------------------------------ workers

  updateWorker(workerId: string, heartbeatStats?: JsonObject, opts?: CallOptions): Promise<Worker> {
    return this.post(`/v1/agl/workers/${encodeURIComponent(workerId)}`, heartbeatStats ? { heartbeat_stats: heartbeatStats } : null, opts);
  }

  getWorkerById(workerId: string, opts?: CallOptions): Promise<Worker | null> {
    return this.get(`/v1/agl/workers/${encodeURIComponent(workerId)}`, opts);
  }

  queryWorkers(q: QueryWorkersRequest = {}, opts?: CallOptions): Promise<PaginatedResult<Worker>> {
    return this.post('/v1/agl/workers/search', { filter_logic: 'and', ...q }, opts);
  }
}
