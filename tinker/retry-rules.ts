// SDK 0.38's retry rules as pure decisions (tinker-sdk-wire.md §9). Two layers, as in the SDK:
//  - the transport layer (Stainless `_base_client.py`): up to 10 retries of 408, 409, 429, 5xx, timeouts and
//    connection errors; `x-should-retry: true|false` overrides the status; the delay is `retry-after-ms` or
//    `Retry-After` when 0 < value <= 60 s, else min(0.5 * 2^n, 10) s less up to 25 % jitter;
//  - the holder layer (`execute_with_retries`) around submits: 408, 409, 429, 5xx, timeouts and connection
//    errors again, min(2^k, 30) s apart, for 5 minutes; 402 (billing) waits 5 s and repeats, uncounted, while the
//    billing window lasts.
// A bodiless 400 ("rejected by Cloudflare") becomes a connection error, so the holder retries it, 16 times per
// client at most (one back per success).

export const TRANSPORT_MAX_RETRIES = 10;
export const EMPTY_400_BUDGET = 16;
export const BILLING_PAUSE_MS = 5_000;
const BILLING_RESET_MS = 5 * 60_000;
const BILLING_LOG_INTERVAL_MS = 60_000;

/** What one attempt ended with, as far as the rules care. */
export type AttemptFailure =
  | { kind: 'status'; status: number; headers: Headers; bodyLength: number }
  | { kind: 'timeout' }
  | { kind: 'connection' };

const RETRYABLE_STATUS = (s: number) => s === 408 || s === 409 || s === 429 || (s >= 500 && s < 600);

/** The transport layer's `_should_retry`. */
export function transportShouldRetry(f: AttemptFailure): boolean {
  if (f.kind !== 'status') return true;
  const header = f.headers.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  return RETRYABLE_STATUS(f.status);
}

/** The holder layer's `_is_retryable_exception` (it never reads headers). */
export function holderShouldRetry(f: AttemptFailure): boolean {
  return f.kind !== 'status' || RETRYABLE_STATUS(f.status);
}

/** A 400 with no body: an intermediary refused the request, not the service. */
export function isEmpty400(f: AttemptFailure): boolean {
  return f.kind === 'status' && f.status === 400 && f.bodyLength === 0;
}

/** Seconds the server asked to wait (`retry-after-ms`, else `Retry-After` as seconds or an HTTP date). */
export function retryAfterSeconds(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms)) return ms / 1000;
  const raw = headers.get('retry-after');
  if (raw === null) return undefined;
  const s = Number(raw.trim());
  if (raw.trim() !== '' && Number.isFinite(s)) return s;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : (date - now) / 1000;
}

/** The transport layer's delay before retry number `retriesSoFar + 1`, in ms. */
export function transportDelayMs(retriesSoFar: number, headers: Headers | undefined, random = Math.random): number {
  const asked = retryAfterSeconds(headers);
  if (asked !== undefined && asked > 0 && asked <= 60) return asked * 1000;
  const base = Math.min(0.5 * 2 ** Math.min(retriesSoFar, 1000), 10);
  return Math.max(0, base * (1 - 0.25 * random())) * 1000;
}

/** The holder layer's delay before its retry number `attempt + 1`, in ms. */
export function holderDelayMs(attempt: number): number {
  return Math.min(2 ** attempt, 30) * 1000;
}

/**
 * The holder's billing state (`_should_pause_on_billing`): a 402 pauses the call while less than
 * `maxPauseSec` passed since the first 402 of the incident; 5 quiet minutes start a new incident.
 */
export class BillingPause {
  private first: number | undefined;
  private lastLogged: number | undefined;

  constructor(
    private readonly maxPauseSec: () => number,
    private readonly log: (line: string) => void,
  ) {}

  shouldPause(detail: string, now = performance.now()): boolean {
    if (this.lastLogged !== undefined && now - this.lastLogged > BILLING_RESET_MS) {
      this.first = undefined;
      this.lastLogged = undefined;
    }
    if (this.first !== undefined && now - this.first > this.maxPauseSec() * 1000) {
      this.log(`tinker: the job was paused due to billing status for ${Math.round((now - this.first) / 1000)} s; giving up`);
      return false;
    }
    if (this.lastLogged === undefined || now - this.lastLogged > BILLING_LOG_INTERVAL_MS) {
      this.lastLogged = now;
      this.log(`tinker: the job is paused due to billing status (HTTP 402); waiting for it to clear. Error: ${detail.slice(0, 300)}`);
    }
    this.first ??= now;
    return true;
  }
}

/** The connection pool's budget of bodiless-400 retries. */
export class Empty400Budget {
  private left = EMPTY_400_BUDGET;
  take(): boolean {
    if (this.left <= 0) return false;
    this.left--;
    return true;
  }
  succeeded(): void {
    if (this.left < EMPTY_400_BUDGET) this.left++;
  }
}
