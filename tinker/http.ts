// One HTTP call to the Tinker service with a deadline and SDK 0.38's retry rules (retry-rules.ts). Every
// non-GET carries an X-Idempotency-Key that stays the same across all retries of the call (the SDK keeps it
// across its transport retries and draws a new one per holder retry; one key for the whole call is what lets a
// service deduplicate any of them). A 401 marked `invalid_token` gets the JWT replaced and is replayed once.
import { randomUUID } from 'node:crypto';
import { NoAuth, type AuthProvider } from './auth';
import { SDK_VERSION, type ResolvedOptions } from './config';
import { TinkerApiError, TinkerTimeoutError } from './errors';
import {
  BillingPause,
  Empty400Budget,
  TRANSPORT_MAX_RETRIES,
  holderDelayMs,
  holderShouldRetry,
  isEmpty400,
  transportDelayMs,
  transportShouldRetry,
  type AttemptFailure,
} from './retry-rules';

export interface HttpAnswer {
  status: number;
  contentType: string;
  headers: Headers;
  bytes: Uint8Array;
  json<T = Record<string, unknown>>(): T;
}

/** Which of the SDK's retry layers wrap a call (tinker-sdk-wire.md §9). */
export type RetryLayers = 'transport' | 'holder' | 'both' | 'none';

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** A JSON value, or raw protobuf bytes. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Deadline of each attempt. */
  timeoutMs?: number;
  /** Absolute time (ms epoch) after which no retry starts. */
  deadline?: number;
  /** Default 'transport' (the SDK's plain client call). */
  retry?: RetryLayers;
  signal?: AbortSignal;
  /** The public method that made the call (x-sdk-method); background calls have none. */
  sdkMethod?: string;
  /** Credential for this call instead of the session's (the JWT exchange uses the raw credential). */
  auth?: AuthProvider;
  /** Statuses handed to the caller at once (asample handles 429 and 402 with its own backoff). */
  noRetry?: number[];
  /** The path is from the server's root, not under /api/v1 (the OpenAPI document an engine serves). */
  fromRoot?: boolean;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A path segment as the SDK puts ids in paths: raw (run ids keep their colons), only what would break the path escaped. */
export function pathSegment(id: string): string {
  return encodeURIComponent(id).replace(/%3A/gi, ':');
}

const invalidToken = (a: HttpAnswer) => a.status === 401 && (a.headers.get('www-authenticate') ?? '').includes('error="invalid_token"');

export class TinkerHttp {
  /** The session's credential; set once client/config said how to authenticate. */
  auth: AuthProvider = new NoAuth();
  /** 402 handling; its window comes from client/config. */
  billing: BillingPause;
  private readonly empty400 = new Empty400Budget();


  constructor(readonly opts: ResolvedOptions) {
    this.billing = new BillingPause(() => 3600, opts.log);
  }

  get billingPauseMs(): number {
    return this.opts.billingPauseMs;
  }

  private async headers(spec: RequestSpec, binary: boolean, key: string, attempt: number, auth: AuthProvider): Promise<Record<string, string>> {
    const h: Record<string, string> = {
      accept: 'application/json',
      ...(spec.body !== undefined ? { 'content-type': binary ? 'application/x-protobuf' : 'application/json' } : {}),
      'user-agent': `agl-temporal-tinker/${SDK_VERSION}`,
      'x-stainless-retry-count': String(attempt),
      ...this.opts.extraHeaders,
      ...spec.headers,
    };
    if (spec.method !== 'GET') h['x-idempotency-key'] = key;
    if (spec.sdkMethod) Object.assign(h, { 'x-sdk-version': SDK_VERSION, 'x-sdk-method': spec.sdkMethod });
    const token = await auth.token();
    if (token) h['x-api-key'] = token;
    return h;
  }

  /** One attempt, replayed once with a new JWT on 401 invalid_token; throws TinkerTimeoutError or a connection error. */
  async once(spec: RequestSpec, idempotencyKey: string, attempt: number): Promise<HttpAnswer> {
    const auth = spec.auth ?? this.auth;
    const headers = await this.headers(spec, spec.body instanceof Uint8Array, idempotencyKey, attempt, auth);
    const first = await this.send(spec, headers);
    if (!invalidToken(first) || !auth.replace) return first;
    const fresh = await auth.replace(headers['x-api-key'] ?? '');
    if (!fresh || fresh === headers['x-api-key']) return first;
    return this.send(spec, { ...headers, 'x-api-key': fresh });
  }

  private async send(spec: RequestSpec, headers: Record<string, string>): Promise<HttpAnswer> {
    const binary = spec.body instanceof Uint8Array;
    const timeoutMs = spec.timeoutMs ?? this.opts.httpTimeoutMs;
    const signals = [AbortSignal.timeout(timeoutMs)];
    if (spec.signal) signals.push(spec.signal);
    let res: Response;
    let bytes: Uint8Array;
    try {
      res = await fetch(`${this.opts.baseUrl}${spec.fromRoot ? '' : '/api/v1'}${spec.path}`, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : binary ? (spec.body as Uint8Array) : JSON.stringify(spec.body),
        signal: AbortSignal.any(signals),
      });
      bytes = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      if ((err as Error).name === 'TimeoutError') throw new TinkerTimeoutError(`${spec.method} ${spec.path} timed out after ${timeoutMs} ms`);
      throw err;
    }
    const contentType = res.headers.get('content-type') ?? '';
    const deprecation = res.headers.get('x-deprecation-note');
    if (deprecation) this.opts.log(`tinker: deprecation notice for ${spec.path}: ${deprecation}`);
    return {
      status: res.status,
      contentType,
      headers: res.headers,
      bytes,
      json<T>() {
        return (bytes.byteLength === 0 ? {} : JSON.parse(Buffer.from(bytes).toString('utf8'))) as T;
      },
    };
  }

  /** A call under the SDK's retry rules; resolves with a 2xx answer or throws. */
  async call(spec: RequestSpec): Promise<HttpAnswer> {
    const key = `agl-retry-${randomUUID()}`;
    const layers = spec.retry ?? 'transport';
    const maxTransport = layers === 'transport' || layers === 'both' ? TRANSPORT_MAX_RETRIES : 0;
    const holder = layers === 'holder' || layers === 'both';
    const deadline = Math.min(spec.deadline ?? Infinity, Date.now() + this.opts.retryBudgetMs);
    let transportRetries = 0;
    let holderRetries = 0;
    for (let attempt = 0; ; attempt++) {
      let failure: AttemptFailure;
      let error: Error;
      try {
        // No attempt outlives the call's deadline.
        const timeoutMs = Math.max(1, Math.min(spec.timeoutMs ?? this.opts.httpTimeoutMs, deadline - Date.now()));
        const answer = await this.once({ ...spec, timeoutMs }, key, attempt);
        if (answer.status >= 200 && answer.status < 300) {
          this.empty400.succeeded();
          return answer;
        }
        error = new TinkerApiError(answer.status, spec.path, Buffer.from(answer.bytes).toString('utf8'));
        failure = { kind: 'status', status: answer.status, headers: answer.headers, bodyLength: answer.bytes.byteLength };
      } catch (err) {
        if (spec.signal?.aborted || !(err instanceof TinkerTimeoutError || isConnectionError(err))) throw err;
        error = err as Error;
        failure = err instanceof TinkerTimeoutError ? { kind: 'timeout' } : { kind: 'connection' };
      }
      let wait: number | undefined;
      if (failure.kind === 'status' && spec.noRetry?.includes(failure.status)) throw error;
      if (holder && failure.kind === 'status' && failure.status === 402 && this.billing.shouldPause(error.message)) {
        wait = this.billingPauseMs;
      } else if (transportRetries < maxTransport && transportShouldRetry(failure)) {
        wait = transportDelayMs(transportRetries++, failure.kind === 'status' ? failure.headers : undefined);
      } else if (holder && (holderShouldRetry(failure) || (isEmpty400(failure) && this.empty400.take()))) {
        wait = holderDelayMs(holderRetries++);
        transportRetries = 0;
      }
      if (wait === undefined || Date.now() + wait > deadline) throw error;
      await sleep(wait, spec.signal);
    }
  }

  async postJson<T = Record<string, unknown>>(path: string, body: unknown, spec: Partial<RequestSpec> = {}): Promise<T> {
    return (await this.call({ method: 'POST', path, body, ...spec })).json<T>();
  }

  async getJson<T = Record<string, unknown>>(path: string, spec: Partial<RequestSpec> = {}): Promise<T> {
    return (await this.call({ method: 'GET', path, ...spec })).json<T>();
  }
}

/** fetch's failures to connect or read (TypeError "fetch failed", socket resets), as opposed to our own errors. */
function isConnectionError(err: unknown): boolean {
  const e = err as Error & { cause?: { code?: string } };
  return e instanceof TypeError || e?.name === 'SocketError' || typeof e?.cause?.code === 'string';
}
