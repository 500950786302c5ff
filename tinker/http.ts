// One HTTP call to the Tinker service with a deadline, and the submit-side retry table (§A.5): 408, 429,
// 5xx, timeouts and connection errors are retried with exponential backoff (1, 2, 4 … 30 s) within a
// budget; other 4xx fail at once. Every non-GET carries an X-Idempotency-Key reused across its retries.
import { randomUUID } from 'node:crypto';
import { SDK_VERSION, type ResolvedOptions } from './config';
import { TinkerApiError, TinkerTimeoutError } from './errors';

export interface HttpAnswer {
  status: number;
  contentType: string;
  bytes: Uint8Array;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** A JSON value, or raw protobuf bytes. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Deadline of each attempt. */
  timeoutMs?: number;
  /** Absolute time (ms epoch) after which no retry starts. */
  deadline?: number;
  retry?: boolean;
  signal?: AbortSignal;
}

const RETRYABLE = (status: number) => status === 408 || status === 429 || status >= 500;

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

export class TinkerHttp {
  constructor(readonly opts: ResolvedOptions) {}

  private headers(extra: Record<string, string> | undefined, binary: boolean): Record<string, string> {
    const h: Record<string, string> = {
      accept: 'application/json',
      'content-type': binary ? 'application/x-protobuf' : 'application/json',
      'user-agent': `agl-temporal-tinker/${SDK_VERSION}`,
      ...extra,
    };
    if (this.opts.apiKey) h['x-api-key'] = this.opts.apiKey;
    return h;
  }

  /** One attempt; throws TinkerTimeoutError on its deadline, TypeError-like errors on connection failures. */
  async once(spec: RequestSpec, idempotencyKey: string, attempt: number): Promise<HttpAnswer> {
    const binary = spec.body instanceof Uint8Array;
    const headers = this.headers(spec.headers, binary);
    if (spec.method !== 'GET') headers['x-idempotency-key'] = idempotencyKey;
    headers['x-stainless-retry-count'] = String(attempt);
    const timeoutMs = spec.timeoutMs ?? this.opts.httpTimeoutMs;
    const signals = [AbortSignal.timeout(timeoutMs)];
    if (spec.signal) signals.push(spec.signal);
    let res: Response;
    try {
      res = await fetch(`${this.opts.baseUrl}/api/v1${spec.path}`, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : binary ? (spec.body as Uint8Array) : JSON.stringify(spec.body),
        signal: AbortSignal.any(signals),
      });
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      if ((err as Error).name === 'TimeoutError') throw new TinkerTimeoutError(`${spec.method} ${spec.path} timed out after ${timeoutMs} ms`);
      throw err;
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    const contentType = res.headers.get('content-type') ?? '';
    return {
      status: res.status,
      contentType,
      bytes,
      json<T>() {
        return (bytes.byteLength === 0 ? {} : JSON.parse(Buffer.from(bytes).toString('utf8'))) as T;
      },
    };
  }

  /** A call with the retry table; resolves with a 2xx answer or throws. */
  async call(spec: RequestSpec): Promise<HttpAnswer> {
    const key = `agl-retry-${randomUUID()}`;
    const deadline = spec.deadline ?? Date.now() + this.opts.retryBudgetMs;
    for (let attempt = 0; ; attempt++) {
      let failure: Error;
      try {
        // No attempt outlives the call's deadline.
        const timeoutMs = Math.max(1, Math.min(spec.timeoutMs ?? this.opts.httpTimeoutMs, deadline - Date.now()));
        const answer = await this.once({ ...spec, timeoutMs }, key, attempt);
        if (answer.status >= 200 && answer.status < 300) return answer;
        failure = new TinkerApiError(answer.status, spec.path, Buffer.from(answer.bytes).toString('utf8'));
        if (!RETRYABLE(answer.status)) throw failure;
      } catch (err) {
        if (err instanceof TinkerApiError && !RETRYABLE(err.status)) throw err;
        if (spec.signal?.aborted) throw err;
        failure = err as Error;
      }
      const backoff = Math.min(1000 * 2 ** attempt, 30_000);
      if (spec.retry === false || Date.now() + backoff > deadline) throw failure;
      await sleep(backoff, spec.signal);
    }
  }

  async postJson<T = Record<string, unknown>>(path: string, body: unknown, spec: Partial<RequestSpec> = {}): Promise<T> {
    return (await this.call({ method: 'POST', path, body, ...spec })).json<T>();
  }

  async getJson<T = Record<string, unknown>>(path: string, spec: Partial<RequestSpec> = {}): Promise<T> {
    return (await this.call({ method: 'GET', path, ...spec })).json<T>();
  }
}
