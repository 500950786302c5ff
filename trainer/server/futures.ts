// The server side of Tinker futures: every queued request gets a request_id whose result is fetched with
// retrieve_future. Results stay retrievable after completion (clients poll the same id concurrently and
// again after a lost response); the oldest completed ones are dropped beyond a bound.
import { randomUUID } from 'node:crypto';
import type { ForwardBackwardResult, SampleResult } from '../../tinker/wire/types';

export type FuturePayload =
  | { kind: 'json'; body: Record<string, unknown> }
  | { kind: 'sample'; result: SampleResult }
  | { kind: 'forward_backward'; result: ForwardBackwardResult }
  | { kind: 'error'; error: string; category: 'user' | 'server' };

interface Entry {
  payload?: FuturePayload;
  waiters: Set<() => void>;
}

export class FutureTable {
  private readonly entries = new Map<string, Entry>();
  private readonly completedOrder: string[] = [];

  // Clients fetch results right away; the bound only keeps re-polls after a lost response working.
  constructor(private readonly maxCompleted = 10_000) {}

  create(): string {
    const id = `req-${randomUUID()}`;
    this.entries.set(id, { waiters: new Set() });
    return id;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  settle(id: string, payload: FuturePayload): void {
    const entry = this.entries.get(id);
    if (!entry || entry.payload) return;
    entry.payload = payload;
    for (const wake of entry.waiters) wake();
    entry.waiters.clear();
    this.completedOrder.push(id);
    while (this.completedOrder.length > this.maxCompleted) this.entries.delete(this.completedOrder.shift()!);
  }

  /** Runs `work` and settles the future with its outcome; never throws. */
  async run(id: string, work: () => Promise<FuturePayload>): Promise<void> {
    try {
      this.settle(id, await work());
    } catch (err) {
      this.settle(id, errorPayload(err));
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

export function errorPayload(err: unknown): FuturePayload {
  const e = err as Error;
  const isUser = e?.name === 'UserError' || e?.name === 'RequestError' || e?.name === 'WireFormatError';
  return { kind: 'error', error: e?.message ?? String(err), category: isUser ? 'user' : 'server' };
}
