// One HTTP request with a deadline over pooled keep-alive connections (node:http), for the JSON clients of the
// services (store client, proxy → store, admin calls). Node's fetch (undici) costs several times the CPU per
// request (web streams, abort plumbing, transferables): it bounded the runners' throughput against the store.
import http from 'node:http';
import https from 'node:https';

export interface TransportRequest {
  method: string;
  headers?: Record<string, string>;
  /** Sent as is (the caller serialises); its length is set. */
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface TransportResponse {
  status: number;
  text: string;
  headers: http.IncomingHttpHeaders;
}

/** The error a request ends with when its deadline passes (not a network failure: never retried blindly). */
export class RequestTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(readonly url: string, readonly timeoutMs: number) {
    super(`no answer from ${url} within ${timeoutMs} ms`);
  }
}

// Connections are reused across calls; an idle one is closed after 30 s, well before the services' own
// keep-alive timeout (65 s, common/http-server.ts), so a pooled connection is not cut under a request.
const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: 30_000, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, timeout: 30_000, scheduling: 'lifo' }),
};

export function httpRequest(target: string | URL, req: TransportRequest): Promise<TransportResponse> {
  const url = typeof target === 'string' ? new URL(target) : target;
  const lib = url.protocol === 'https:' ? https : http;
  const agent = agents[url.protocol as keyof typeof agents];
  if (!agent) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol} in ${url.href}`));
  return new Promise<TransportResponse>((resolve, reject) => {
    if (req.signal?.aborted) return reject(req.signal.reason ?? new Error('aborted'));
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    let settled = false;
    const finish = (err: unknown, res?: TransportResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      if (err) {
        request.destroy();
        reject(err);
      } else resolve(res!);
    };
    const onAbort = () => finish(req.signal!.reason ?? new Error('aborted'));
    const request = lib.request(url, { method: req.method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish(null, { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', (e) => finish(e));
      res.on('aborted', () => finish(Object.assign(new Error(`connection to ${url.host} closed mid-answer`), { code: 'ECONNRESET' })));
    });
    const timer = setTimeout(() => finish(new RequestTimeoutError(url.href, req.timeoutMs)), req.timeoutMs);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (e) => finish(e));
    request.end(req.body);
  });
}
