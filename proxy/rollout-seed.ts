// The sampling seed of a rollout-scoped call, derived from what the call is rather than from when it ran:
// the rollout's `metadata.sampling_seed` (set by the training workflow from config seed, phase, batch, task and
// group member) and the call's index within its attempt (how many answered calls the attempt already recorded).
// So a retried attempt (its runner died), a call retried after a proxy or trainer restart, and a rerun of the
// same config all sample exactly the same tokens. Failed calls (error spans) do not count: their retry gets the
// seed they would have had.
import { createHash } from 'node:crypto';
import { fetchJson } from '../common/http';
import { PROXY_SPAN_NAME } from './span';

interface SpanLike {
  name?: string;
  status?: { status_code?: string } | null;
}

export class RolloutSeeds {
  /** rollout id -> base seed; a rollout's metadata never changes, so this is only a cache. */
  private readonly bases = new Map<string, string>();

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

  /** A 31-bit seed for the next call of this attempt; `requested` (the agent's own seed) is mixed in. */
  async seedFor(rolloutId: string, attemptId: string, requested?: number): Promise<number> {
    const [base, index] = await Promise.all([this.baseSeed(rolloutId), this.callIndex(rolloutId, attemptId)]);
    const key = `${base}/${index}/${requested ?? ''}`;
    return createHash('sha256').update(key).digest().readUInt32BE(0) & 0x7fffffff;
  }
}
