// The store's own stalls: a process that was frozen (SIGSTOP, a suspended VM, swapped out) or blocked for a while
// heard nothing from anyone meanwhile, so that silence must not count against the runners (their attempts would
// all be retired as unresponsive the moment the store resumes). The watchdog ticks at a fixed interval; a tick
// that comes far later than due means the store itself was away, and silence is counted from then on.
/** A tick this much later than due (ms) is a stall of the store, not a busy moment. */
const STALL_MS = 3_000;

export class StallClock {
  private lastTickMs: number;
  /** Seconds since the epoch from which runner silence counts (the store's start, or the end of its last stall). */
  servingSince: number;

  constructor(
    private readonly intervalMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.lastTickMs = nowMs();
    this.servingSince = this.lastTickMs / 1000;
  }

  /** Call on each watchdog tick; returns how long the store was stalled (ms), 0 when it was not. */
  tick(): number {
    const now = this.nowMs();
    const late = now - this.lastTickMs - this.intervalMs;
    this.lastTickMs = now;
    if (late < STALL_MS) return 0;
    this.servingSince = now / 1000;
    return late + this.intervalMs;
  }
}
