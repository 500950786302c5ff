// How a rollout-scoped call samples, derived from what the call is rather than from when it ran: its seed comes
// from the rollout's `metadata.sampling_seed` (set by the training workflow from config seed, phase, batch, task
// and group member), the request's fingerprint (replay.ts) and how many answered calls of the attempt asked the
// very same thing before it. So a retried attempt (its runner died), a call retried after a proxy or trainer
// restart, and a rerun of the same config all sample exactly the same tokens, and calls an agent makes in
// parallel get seeds that do not depend on which arrived first. Failed calls (error spans) do not count: their
// retry gets the seed they would have had. A client's retry of a call whose answer is already recorded gets that
// answer back (`recorded`) instead of a second sample.
import { createHash } from 'node:crypto';
import { fetchJson } from '../common/http';
import type { Span } from '../store/types';
import { FINGERPRINT_ATTRIBUTE } from './replay';
import { PROXY_SPAN_NAME } from './span';

export interface CallPlan {
  seed: number;
  /** The recorded answer to this very request, when the client says it is retrying it. */
  recorded: Span | null;
  /** Call once the call's span is written or the call failed. */
  release(): void;
}

export class RolloutSeeds {
  /** rollout id -> base seed; a rollout's metadata never changes, so this is only a cache. */
  private readonly bases = new Map<string, string>();
  /** rollout/attempt/fingerprint -> calls holding a seed and not yet recorded. */
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

  /** The attempt's answered calls that asked what `fingerprint` asks, by sequence id. */
  private async answeredAlike(rolloutId: string, attemptId: string, fingerprint: string): Promise<Span[]> {
    const page = await fetchJson<{ items: Span[] }>(`${this.base}/spans/search`, {
      body: { rollout_id: rolloutId, attempt_id: attemptId, name: PROXY_SPAN_NAME, limit: -1, offset: 0 },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
    });
    return (page.items ?? [])
      .filter((s) => s.name === PROXY_SPAN_NAME && s.status?.status_code !== 'ERROR' && s.attributes?.[FINGERPRINT_ATTRIBUTE] === fingerprint)
      .sort((x, y) => x.sequence_id - y.sequence_id);
  }

  async plan(rolloutId: string, attemptId: string, fingerprint: string, clientRetry: boolean, signal?: AbortSignal): Promise<CallPlan> {
    const key = `${rolloutId}/${attemptId}/${fingerprint}`;
    // A client that gave up waiting retries while its first try still runs here: let that finish, then answer
    // with what it recorded rather than sampling a second answer beside it.
    while (clientRetry && (this.inFlight.get(key) ?? 0) > 0 && !signal?.aborted) await new Promise((r) => setTimeout(r, 100));
    // Counted before the store is asked: a parallel twin that records its span meanwhile is then counted twice,
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
      const [base, alike] = await Promise.all([this.baseSeed(rolloutId), this.answeredAlike(rolloutId, attemptId, fingerprint)]);
      const recorded = clientRetry ? (alike.at(-1) ?? null) : null;
      const index = alike.length + parallel;
      const seed = createHash('sha256').update(`${base}/${fingerprint}/${index}`).digest().readUInt32BE(0) & 0x7fffffff;
      return { seed, recorded, release };
    } catch (err) {
      release();
      throw err;
    }
  }
}
