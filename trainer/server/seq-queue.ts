// Per-model FIFO by seq_id (§A.6): one model's requests run strictly in seq_id order, one at a time. A
// request that arrives early waits for the missing lower ids (bounded by gapTimeoutMs); a repeated seq_id
// returns the request_id it was first given, so client retries of a submit are harmless. Only the last
// SEEN_WINDOW ids run are remembered (a retry comes within seconds), so a long run's memory stays flat.
import { RequestError } from './futures';

/** How many seq_ids below the next one still answer a duplicate submit with their request_id. */
export const SEEN_WINDOW = 8192;

interface Waiting {
  requestId: string;
  run: () => Promise<void>;
  onGapTimeout: (message: string) => void;
  timer: NodeJS.Timeout;
}

export class SeqQueue {
  private next: number;
  private readonly seen = new Map<number, string>();
  private readonly waiting = new Map<number, Waiting>();
  private draining = false;

  constructor(
    firstSeqId = 1,
    private readonly gapTimeoutMs = 60_000,
  ) {
    this.next = firstSeqId;
  }

  /** The seq_id a client reattaching to this model should send next. */
  nextSeqId(): number {
    let max = this.next - 1;
    for (const s of this.seen.keys()) max = Math.max(max, s);
    return max + 1;
  }

  /** The existing request_id for a duplicate seq_id, else undefined after queueing `run`. */
  submit(seqId: number | undefined, requestId: string, run: () => Promise<void>, onGapTimeout: (message: string) => void): string | undefined {
    const seq = seqId ?? this.nextSeqId();
    if (!Number.isInteger(seq) || seq < 0) throw new RequestError(`seq_id must be a non-negative integer, got ${seqId}`);
    const existing = this.seen.get(seq);
    if (existing) return existing;
    if (seq < this.next) {
      throw new RequestError(`seq_id ${seq} is behind this model's sequence (next is ${this.next}); reattach with the next seq_id`, 409);
    }
    this.seen.set(seq, requestId);
    const timer = setTimeout(() => {
      if (!this.waiting.has(seq)) return;
      this.waiting.delete(seq);
      onGapTimeout(`seq_id ${seq} waited ${this.gapTimeoutMs} ms for seq_id ${this.next}, which never arrived`);
    }, this.gapTimeoutMs);
    timer.unref();
    this.waiting.set(seq, { requestId, run, onGapTimeout, timer });
    void this.drain();
    return undefined;
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        const item = this.waiting.get(this.next);
        if (!item) break;
        this.waiting.delete(this.next);
        clearTimeout(item.timer);
        this.next++;
        this.seen.delete(this.next - 1 - SEEN_WINDOW);
        // Yield first so the HTTP response for the submit goes out before CPU-heavy work starts.
        await new Promise((r) => setImmediate(r));
        await item.run();
      }
    } finally {
      this.draining = false;
    }
  }
}
