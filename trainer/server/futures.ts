// The server side of Tinker futures: every queued request gets a request_id whose result is fetched with
// retrieve_future. Results stay retrievable after completion (clients poll the same id concurrently and
// again after a lost response, and a submit retried by the SDK for up to 5 min is answered with the same id):
// each completed result is kept for `retainMs` (10 min) after it settled, then dropped (the id answers 410,
// "promise expired": the SDK re-submits a sample, and a training call fails, as with hosted Tinker).
// Memory is therefore flat: it holds the results of the last 10 minutes, whatever the length of the run.
import { randomUUID } from 'node:crypto';
import type { ForwardBackwardResult, SampleResult } from '../../tinker/wire/types';
import { clientMessage } from '../../common/front-door';
import type { TrainerDisk } from './disk-use';

export type FuturePayload =
  | { kind: 'json'; body: Record<string, unknown> }
  | { kind: 'sample'; result: SampleResult }
  | { kind: 'forward_backward'; result: ForwardBackwardResult }
  | { kind: 'error'; error: string; category: 'user' | 'server' };

interface Entry {
  payload?: FuturePayload;
  waiters: Set<() => void>;
}

/** How long a completed future's result stays retrievable: beyond the SDK's 5 min of submit retries and its 30 s re-poll backoff. */
export const FUTURE_RETAIN_MS = 10 * 60_000;

export class FutureTable {
  private readonly entries = new Map<string, Entry>();
  /** Completed ids and when they settled; a Map iterates in insertion order, so oldest first. */
  private readonly settledAt = new Map<string, number>();

  constructor(
    private readonly retainMs = FUTURE_RETAIN_MS,
    /** A guard against a flood only (about 170 results/s for 10 min): past it the oldest go before their time. */
    private readonly maxCompleted = 100_000,
    private readonly now: () => number = Date.now,
    /** Turns a failed request's error into its payload (the trainer's: errorPayload with its disk). */
    private readonly describe: (err: unknown) => FuturePayload = (err) => errorPayload(err),
  ) {}

  create(): string {
    this.expire();
    const id = `req-${randomUUID()}`;
    this.entries.set(id, { waiters: new Set() });
    return id;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** Futures held: pending ones and completed results still retrievable. */
  get size(): number {
    return this.entries.size;
  }

  settle(id: string, payload: FuturePayload): void {
    const entry = this.entries.get(id);
    if (!entry || entry.payload) return;
    entry.payload = payload;
    for (const wake of entry.waiters) wake();
    entry.waiters.clear();
    this.settledAt.set(id, this.now());
    this.expire();
  }

  /** Drops completed results older than `retainMs` (and the oldest beyond `maxCompleted`). */
  private expire(): void {
    const now = this.now();
    for (const [id, at] of this.settledAt) {
      if (now - at <= this.retainMs && this.settledAt.size <= this.maxCompleted) break;
      this.settledAt.delete(id);
      this.entries.delete(id);
    }
  }

  /** Runs `work` and settles the future with its outcome; never throws. */
  async run(id: string, work: () => Promise<FuturePayload>): Promise<void> {
    try {
      this.settle(id, await work());
    } catch (err) {
      this.settle(id, this.describe(err));
    }
  }

  /** The payload once settled, waiting at most `timeoutMs`; 'pending' on timeout, undefined if unknown. */
  async wait(id: string, timeoutMs: number, abort?: AbortSignal): Promise<FuturePayload | 'pending' | undefined> {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.payload) return entry.payload;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        entry.waiters.delete(done);
        abort?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      entry.waiters.add(done);
      abort?.addEventListener('abort', done);
    });
    return entry.payload ?? 'pending';
  }
}

/** Bad input from the caller: answered as category "user". */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/**
 * A failure as a client sees it: category "user" for bad input and for a full disk (`disk`: retrying cannot
 * help until an operator frees space), "server" otherwise; its message one line, bounded, and without the paths
 * of this machine (the data directory shows as "<data>").
 */
export function errorPayload(err: unknown, disk?: TrainerDisk): FuturePayload {
  const e = err as Error;
  const noSpace = disk?.noted(err) ?? null;
  const isUser = noSpace !== null || e?.name === 'UserError' || e?.name === 'RequestError' || e?.name === 'WireFormatError';
  const roots: Record<string, string> = disk ? { [disk.dataDir]: '<data>' } : {};
  roots[process.cwd()] = '<trainer dir>';
  return { kind: 'error', error: clientMessage(noSpace ?? e?.message ?? String(err), roots, 1000), category: isUser ? 'user' : 'server' };
}
