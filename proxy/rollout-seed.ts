// How a rollout-scoped call samples, derived from what the call is rather than from when it ran: its seed comes
// from the rollout's `metadata.sampling_seed` (set by the training workflow from config seed, phase, batch, task
// and group member), the request's fingerprint (replay.ts) and how many answered calls of the attempt asked the
// very same thing before it. So a retried attempt (its runner died), a call retried after a proxy or trainer
// restart, and a rerun of the same config all sample exactly the same tokens, and calls an agent makes in
// parallel get seeds that do not depend on which arrived first. Failed calls (error spans) do not count: their
// retry gets the seed they would have had. A client's retry of a call whose answer is already recorded gets that
// answer back (`recorded`) instead of a second sample. The count and the recorded answer come from the store's
// index of answered calls (the fingerprint is the span's call key, store/types.ts CALL_KEY_ATTR), which is as
// durable as the spans themselves: a restarted proxy finds the same counts.
import { createHash } from 'node:crypto';
import { fetchJson } from '../common/http';
import type { CallRecord, Span } from '../store/types';
import type { PolicySpec } from './policy-spec';

export interface CallPlan {
  seed: number;
  /** The recorded answer to this very request, when the client says it is retrying it. */
  recorded: Span | null;
  /** The policy the rollout was enqueued under (rollout-policy.ts); null or absent: the current policy. */
  policy?: PolicySpec | null;
  /** Call once the call's span is written or the call failed. */
  release(): void;
}

/** What the proxy reads from a rollout: its base seed and the resources it was enqueued under. */
export interface RolloutFacts {
  seedBase: string;
  resourcesId: string | null;
}

export class RolloutSeeds {
  /** rollout id -> its facts (concurrent first calls share one fetch); a rollout's metadata and resources do not change, so this is only a cache. */
  private readonly facts = new Map<string, Promise<RolloutFacts>>();
  /** rollout/attempt/fingerprint -> calls holding a seed and not yet recorded. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
  ) {}

  /** One GET /rollouts/{id} per rollout, shared by the seed and the policy resolution (rollout-policy.ts). */
  rollout(rolloutId: string): Promise<RolloutFacts> {
    const cached = this.facts.get(rolloutId);
    if (cached !== undefined) return cached;
    const fetched = fetchJson<{ metadata?: Record<string, unknown> | null; resources_id?: string | null } | null>(
      `${this.base}/rollouts/${encodeURIComponent(rolloutId)}`,
      { method: 'GET', timeoutMs: this.timeoutMs, headers: this.headers },
    ).then((rollout) => {
      const s = rollout?.metadata?.sampling_seed;
      // Rollouts enqueued by others carry no seed: their id is stable across attempts and restarts too.
      const seedBase = typeof s === 'number' || typeof s === 'string' ? `seed:${s}` : `rollout:${rolloutId}`;
      return { seedBase, resourcesId: typeof rollout?.resources_id === 'string' ? rollout.resources_id : null };
    });
    // A failed fetch is not kept: the next call asks the store again.
    fetched.catch(() => {
      if (this.facts.get(rolloutId) === fetched) this.facts.delete(rolloutId);
    });
    if (this.facts.size > 10_000) this.facts.delete(this.facts.keys().next().value!);
    this.facts.set(rolloutId, fetched);
    return fetched;
  }

  /**
   * How many answered calls of the attempt asked what `fingerprint` asks, and (for a client's retry) the latest
   * of them. One indexed look-up in the store (POST /spans/calls): no earlier span is read, so a call costs the
   * same whether its attempt made 3 calls before it or 300.
   */
  private answeredAlike(rolloutId: string, attemptId: string, fingerprint: string, withLast: boolean): Promise<CallRecord> {
    return fetchJson<CallRecord>(`${this.base}/spans/calls`, {
      body: { rollout_id: rolloutId, attempt_id: attemptId, call_key: fingerprint, with_last: withLast },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
    });
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
      const [{ seedBase: base }, alike] = await Promise.all([this.rollout(rolloutId), this.answeredAlike(rolloutId, attemptId, fingerprint, clientRetry)]);
      const recorded = clientRetry ? alike.last : null;
      const index = alike.answered + parallel;
      const seed = createHash('sha256').update(`${base}/${fingerprint}/${index}`).digest().readUInt32BE(0) & 0x7fffffff;
      return { seed, recorded, release };
    } catch (err) {
      release();
      throw err;
    }
  }
}
