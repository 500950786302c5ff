// Small HTTP helpers with a deadline on every call.
import { httpRequest } from './http-transport';
import { setTimeout as sleep } from 'node:timers/promises';

export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly url: string,
    readonly body: string,
  ) {
    super(`HTTP ${status} from ${url}: ${body.slice(0, 500)}`);
  }
}

export interface FetchJsonOptions {
  method?: string;
  body?: unknown;
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Aborts the request early (the deadline still applies). */
  signal?: AbortSignal;
}

/** JSON request/response with a deadline over pooled connections (http-transport.ts); non-2xx answers throw HttpError. */
export async function fetchJson<T = unknown>(url: string, opts: FetchJsonOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await httpRequest(url, {
    method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    timeoutMs: opts.timeoutMs ?? 30_000,
    signal: opts.signal,
  });
  if (res.status < 200 || res.status >= 300) throw new HttpError(res.status, url, res.text);
  return (res.text === '' ? undefined : JSON.parse(res.text)) as T;
}

/** Polls `url` until it answers 2xx or the deadline passes. */
export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (last: ${last})`);
}
