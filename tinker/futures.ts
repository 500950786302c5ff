// Waiting for a queued request as SDK 0.38 does (lib/api_future_impl.py): retrieve_future long-polls (45 s per
// poll), first with allow_metadata_only (a {"status":"complete_metadata"} answer turns it off); try_again and
// 408/5xx re-poll at once, 429, timeouts and connection errors back off (2^k s, at most 30 s), 400 is retried
// three times, 402 waits out the billing window, 410 means the promise expired, other 4xx are fatal;
// {"error", "category"} raises RequestFailedError.
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
const MAX_BAD_REQUESTS = 3;
const MODEL_NOT_LOADED = /Model \S+ not loaded/;

export interface RetrieveOptions extends CallOptions {
  deadline: number;
  /** Ask for protobuf (only sample and forward / forward_backward results come as protobuf). */
  acceptProto: boolean;
  /** When the submit was sent (performance.now()), for X-Tinker-Create-Promise-Roundtrip-Time. */
  submittedAt?: number;
  sdkMethod?: string;
}

export async function retrieveFuture(http: TinkerHttp, requestId: string, requestType: RequestType, opts: RetrieveOptions): Promise<FutureAnswer> {
  const pollStart = performance.now();
  let backoffExp = 0;
  let badRequests = 0;
  let allowMetadataOnly = true;
  for (let iteration = 0; ; iteration++) {
    const left = opts.deadline - Date.now();
    if (left <= 0) throw new TinkerTimeoutError(`request ${requestId} (${requestType}) had no result before its deadline`);
    const headers: Record<string, string> = {
      'x-tinker-request-iteration': String(iteration),
      'x-tinker-request-type': requestType,
    };
    if (opts.acceptProto) headers.accept = 'application/x-protobuf';
    if (iteration === 0) headers['x-tinker-create-promise-roundtrip-time'] = String(((pollStart - (opts.submittedAt ?? pollStart)) / 1000).toFixed(6));
    let answer;
    try {
      answer = await http.once(
        {
          method: 'POST',
          path: '/retrieve_future',
          body: { request_id: requestId, allow_metadata_only: allowMetadataOnly },
          headers,
          timeoutMs: Math.min(POLL_TIMEOUT_MS, left),
          signal: opts.signal,
          sdkMethod: opts.sdkMethod,
        },
        `agl-poll-${requestId}-${iteration}`,
        0,
      );
    } catch (err) {
      if (opts.signal?.aborted || !(err instanceof TinkerTimeoutError || err instanceof TypeError)) throw err;
      // A connection error or a poll that timed out: back off 1, 2, 4 … 30 s.
      await sleep(Math.min(1000 * 2 ** backoffExp++, 30_000, Math.max(0, opts.deadline - Date.now())), opts.signal);
      continue;
    }
    const status = answer.status;
    backoffExp = status === 429 ? backoffExp : 0;
    if (status === 200) {
      if (answer.contentType.includes('application/x-protobuf')) return { kind: 'proto', bytes: answer.bytes };
      const body = answer.json();
      if (body.type === 'try_again') continue;
      if (body.status === 'complete_metadata') {
        allowMetadataOnly = false;
        continue;
      }
      if ('error' in body) {
        const category = body.category === 'user' || body.category === 'server' ? body.category : 'unknown';
        throw new RequestFailedError(`${requestType} request ${requestId} failed: ${String(body.error)}`, category, requestId);
      }
      return { kind: 'json', body };
    }
    const text = Buffer.from(answer.bytes).toString('utf8');
    if (status === 402 && http.billing.shouldPause(text)) {
      await sleep(http.billingPauseMs, opts.signal);
      continue;
    }
    if (status === 408 || (status >= 500 && status < 600)) {
      if (status === 408) badRequests = 0;
      await sleep(100, opts.signal); // "at once", but never a hot loop
      continue;
    }
    if (status === 429) {
      await sleep(Math.min(1000 * 2 ** backoffExp++, 30_000), opts.signal);
      continue;
    }
    // SkyRL answers a request for a model its engine no longer holds (it restarted) with a 400: the model is gone,
    // not the request wrong, so it is said as the 404 of a lost model, which a caller retries on a fresh one.
    if (status === 400 && MODEL_NOT_LOADED.test(text)) throw new TinkerApiError(404, '/retrieve_future', `the engine no longer holds the model (it restarted?): ${text}`);
    if (status === 400 && ++badRequests <= MAX_BAD_REQUESTS) continue;
    if (status === 410) throw new TinkerApiError(410, '/retrieve_future', `promise ${requestId} expired: ${text}`);
    throw new TinkerApiError(status, '/retrieve_future', text);
  }
}
