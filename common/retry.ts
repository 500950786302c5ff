// One retry loop: a call tried again after a pause that doubles up to a cap, until it succeeds, fails with an
// error that may not be retried, runs out of tries or of time, or its signal aborts. The last error is what the
// caller sees; nothing is wrapped. Written here rather than taken from p-retry, which is ESM-only while this
// project loads as CommonJS.
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** The pause after the first failure; doubled after each further one, up to `maxPauseMs`. */
  firstPauseMs: number;
  maxPauseMs: number;
  /** How many times to try again after the first try (default: no limit). */
  retries?: number;
  /** A time (ms since the epoch): no pause that would end after it is taken. */
  deadline?: number;
  /** Whether this error may be tried again (default: every error). */
  retryable?: (err: unknown) => boolean;
  /** Aborted: the last error is thrown, at once or when the pause it cuts short ends. */
  signal?: AbortSignal;
}

/** `fn` (given the number of the try, from 0) until it succeeds; see RetryOptions for when it gives up. */
export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      const pauseMs = Math.min(o.maxPauseMs, o.firstPauseMs * 2 ** attempt);
      if (o.signal?.aborted) throw err;
      if (o.retryable && !o.retryable(err)) throw err;
      if (o.retries !== undefined && attempt >= o.retries) throw err;
      if (o.deadline !== undefined && Date.now() + pauseMs > o.deadline) throw err;
      await sleep(pauseMs, undefined, { signal: o.signal }).catch(() => undefined);
      if (o.signal?.aborted) throw err;
    }
  }
}
