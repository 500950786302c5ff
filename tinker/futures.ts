// Waiting for a queued request: retrieve_future long-polls (45 s per poll), following §A.5 — try_again and
// 408/5xx re-poll at once, 429 and connection errors back off (2^k s, at most 30 s), 400 is retried three
// times, 410 means the promise expired, other 4xx are fatal; {"error", "category"} raises RequestFailedError.
import type { CallOptions } from './config';
import { RequestFailedError, TinkerApiError, TinkerTimeoutError } from './errors';
import { sleep, type TinkerHttp } from './http';

export type RequestType =
  | 'CreateModel'
  | 'ForwardBackward'
  | 'Forward'
  | 'OptimStep'
  | 'SaveWeights'
  | 'SaveWeightsForSampler'
  | 'LoadWeights'
  | 'Sample'
  | 'UnloadModel';

export type FutureAnswer = { kind: 'json'; body: Record<string, unknown> } | { kind: 'proto'; bytes: Uint8Array };

const POLL_TIMEOUT_MS = 45_000;

export async function retrieveFuture(
  http: TinkerHttp,
  requestId: string,
  requestType: RequestType,
  opts: CallOptions & { deadline: number; acceptProto: boolean },
): Promise<FutureAnswer> {
  let backoffExp = 0;
  let badRequests = 0;
  for (let iteration = 0; ; iteration++) {
    const left = opts.deadline - Date.now();
    if (left <= 0) throw new TinkerTimeoutError(`request ${requestId} (${requestType}) had no result before its deadline`);
    const headers: Record<string, string> = {
      'x-tinker-request-iteration': String(iteration),
      'x-tinker-request-type': requestType,
    };
    if (opts.acceptProto) headers.accept = 'application/x-protobuf, application/json';
    let answer;
    try {
      answer = await http.once(
        { method: 'POST', path: '/retrieve_future', body: { request_id: requestId, allow_metadata_only: false }, headers, timeoutMs: Math.min(POLL_TIMEOUT_MS, left), signal: opts.signal },
        `agl-poll-${requestId}-${iteration}`,
        0,
      );
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      if (err instanceof TinkerTimeoutError) continue; // the poll itself timed out: poll again
      await sleep(Math.min(1000 * 2 ** backoffExp++, 30_000, Math.max(0, opts.deadline - Date.now())), opts.signal);
      continue;
    }
    const status = answer.status;
    if (status === 200) {
      backoffExp = 0;
      if (answer.contentType.includes('application/x-protobuf')) return { kind: 'proto', bytes: answer.bytes };
      const body = answer.json();
      if (body.type === 'try_again') continue;
      if (typeof body.error === 'string' || 'error' in body) {
        const category = body.category === 'user' || body.category === 'server' ? body.category : 'unknown';
        throw new RequestFailedError(`${requestType} request ${requestId} failed: ${String(body.error)}`, category, requestId);
      }
      return { kind: 'json', body };
    }
    const text = Buffer.from(answer.bytes).toString('utf8');
    if (status === 408 || status >= 500) {
      await sleep(100, opts.signal); // "immediately", but never a hot loop
      continue;
    }
    if (status === 429) {
      await sleep(Math.min(1000 * 2 ** backoffExp++, 30_000), opts.signal);
      continue;
    }
    if (status === 400 && ++badRequests <= 3) continue;
    if (status === 410) throw new TinkerApiError(410, '/retrieve_future', `promise ${requestId} expired: ${text}`);
    throw new TinkerApiError(status, '/retrieve_future', text);
  }
}
