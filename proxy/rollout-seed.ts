// The sampling seed of a rollout-scoped call, derived from what the call is rather than from when it ran:
// the rollout's `metadata.sampling_seed` (set by the training workflow from config seed, phase, batch, task and
// group member) and the call's index within its attempt (how many answered calls the attempt already recorded).
// So a retried attempt (its runner died), a call retried after a proxy or trainer restart, and a rerun of the
// same config all sample exactly the same tokens. Failed calls (error spans) do not count: their retry gets the
// seed they would have had. Calls an attempt runs in parallel are told apart by the calls of that attempt still
// in flight here when they start, so two parallel calls never share a seed; sequential calls are unaffected.
import { createHash } from 'node:crypto';
import { fetchJson } from '../common/http';
import { PROXY_SPAN_NAME } from './span';

interface SpanLike {
  name?: string;
  status?: { status_code?: string } | null;
}

/** A call's seed, held until its span is recorded (or the call failed). */
export interface SeedLease {
  seed: number;
  release(): void;
}

export class RolloutSeeds {
  /** rollout id -> base seed; a rollout's metadata never changes, so this is only a cache. */
  private readonly bases = new Map<string, string>();
  /** rollout/attempt -> calls holding a seed and not yet recorded. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
  ) {}

  private async baseSeed(rolloutId: string): Promise<string> {
    const cached = this.bases.get(rolloutId);
    if (cached !== undefined) return cached;
    const rollout = await fetchJson<{ metadata?: Record<string, unknown> | null } | null>(
      `${this.base}/rollouts/${encodeURIComponent(rolloutId)}`,
      { method: 'GET', timeoutMs: this.timeoutMs, headers: this.headers },
    );
    const s = rollout?.metadata?.sampling_seed;
    // Rollouts enqueued by others carry no seed: their id is stable across attempts and restarts too.
    const value = typeof s === 'number' || typeof s === 'string' ? `seed:${s}` : `rollout:${rolloutId}`;
    if (this.bases.size > 10_000) this.bases.delete(this.bases.keys().next().value!);
    this.bases.set(rolloutId, value);
    return value;
  }

  private async callIndex(rolloutId: string, attemptId: string): Promise<number> {
    const page = await fetchJson<{ items: SpanLike[] }>(`${this.base}/spans/search`, {
      body: { rollout_id: rolloutId, attempt_id: attemptId, name: PROXY_SPAN_NAME, limit: -1, offset: 0 },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
    });
    return (page.items ?? []).filter((s) => s.name === PROXY_SPAN_NAME && s.status?.status_code !== 'ERROR').length;
  }

  /**
   * A 31-bit seed for the next call of this attempt; `requested` (the agent's own seed) is mixed in. Release the
   * lease once the call's span is written or the call failed.
   */
  async seedFor(rolloutId: string, attemptId: string, requested?: number): Promise<SeedLease> {
    const key = `${rolloutId}/${attemptId}`;
    // Counted before the store is asked: a parallel call that records its span meanwhile is then counted twice,
    // which skips an index but never repeats one.
    const parallel = this.inFlight.get(key) ?? 0;
    this.inFlight.set(key, parallel + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
    try {
      const [base, recorded] = await Promise.all([this.baseSeed(rolloutId), this.callIndex(rolloutId, attemptId)]);
      const material = `${base}/${recorded + parallel}/${requested ?? ''}`;
      return { seed: createHash('sha256').update(material).digest().readUInt32BE(0) & 0x7fffffff, release };
    } catch (err) {
      release();
      throw err;
    }
  }
}
