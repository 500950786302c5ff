// How a rollout-scoped call samples, derived from what the call is rather than from when it ran: its seed comes
// from the rollout's `metadata.sampling_seed` (set by the training workflow from config seed, phase, batch, task
// and group member), the request's fingerprint (replay.ts) and how many answered calls of the attempt asked the
// very same thing before it. So a retried attempt (its runner died), a call retried after a proxy or trainer
// restart, and a rerun of the same config all sample exactly the same tokens, and calls an agent makes in
// parallel get seeds that do not depend on which arrived first. Failed calls (error spans) do not count: their
// retry gets the seed they would have had. A client's retry of a call whose answer is already recorded gets that
// answer back (`recorded`) instead of a second sample. The counts come from the store's record of answered calls
// (the fingerprint is the span's call key, store/types.ts CALL_KEY_ATTR), which is as durable as the spans
// themselves: a restarted proxy finds the same counts. The first call of an attempt this proxy serves reads the
// attempt's call keys once (POST /spans/search: none for a fresh attempt); later calls count from memory, adding
// each answered span this proxy writes, so a call asks the store nothing before it samples. A
// span write that failed (it may have landed: a lost answer) drops the attempt's counts and its next call reads
// them again. A client's retry asks the store itself (POST /spans/calls), for the recorded answer. What the
// memory cannot see: another proxy answering calls of the same attempt (one attempt is served by one proxy here:
// the run's proxyUrl); its identical repeats would get a seed index this proxy already gave.
import { createHash } from 'node:crypto';
import { fetchJson, HttpError } from '../common/http';
import { httpRequest } from '../common/http-transport';
import { CALL_KEY_ATTR, REVISION_HEADER, type CallRecord, type Span } from '../store/types';
import type { PolicySpec } from './policy-spec';
import { setTimeout as sleep } from 'node:timers/promises';
import { BoundedMap } from '../common/bounded-map';

export interface CallPlan {
  seed: number;
  /** The recorded answer to this very request, when the client says it is retrying it. */
  recorded: Span | null;
  /** The policy the rollout was enqueued under (rollout-policy.ts); null or absent: the current policy. */
  policy?: PolicySpec | null;
  /** What the seed and the policy were read from: the span is written on the condition that it still holds. */
  facts?: RolloutFacts;
  /** The same call planned again once the store said its rollout changed (the cached facts dropped). */
  again?(): Promise<CallPlan>;
  /** Call once the call's span is written or the call failed. */
  release(): void;
  /**
   * Call when the call's span write ended: 'answered' (an OK span is stored: it counts), 'error' (an error span
   * is stored: it does not), 'failed' (not known to be stored: the attempt's counts are read again), 'refused'
   * (the store stored nothing: its rollout changed since the plan; the call is planned again).
   */
  written?(outcome: 'answered' | 'error' | 'failed' | 'refused'): void;
}

/**
 * What the proxy reads from a rollout, the same for all its attempts: its base seed and the resources it was
 * enqueued under, read once and held under the rollout's revision (store/db.ts addRolloutRevision: raised by every
 * change of the rollout's status, resources, metadata, ...). The span of a call planned from these facts is
 * written only while the rollout is still at `revision` (the store refuses it otherwise, span-sink.ts): the call
 * is then planned again from the rollout as it is now. A stale cache never stores a span: it costs one sample.
 */
export interface RolloutFacts {
  seedBase: string;
  resourcesId: string | null;
  /**
   * A revision at which the rollout still had these facts: the one read with them, raised where the store answers
   * an accepted write with a later one (the write's own heartbeat: the facts did not change). Null: a store that
   * does not tell (Agent-lightning's own); its spans are written without the condition.
   */
  revision: number | null;
}

export class RolloutSeeds {
  /** rollout id -> its facts (concurrent first calls share one fetch), until the store says the rollout changed. */
  private readonly facts = new BoundedMap<string, Promise<RolloutFacts>>(10_001, { onEvict: (id) => this.factsRead.delete(id) });
  /** The same once read (to drop an entry only when it is the read the store refused). */
  private readonly factsRead = new Map<string, RolloutFacts>();
  /** rollout/attempt/fingerprint -> calls holding a seed and not yet recorded. */
  private readonly inFlight = new Map<string, number>();
  /**
   * rollout/attempt -> answered calls per fingerprint: read from the store at the attempt's first call here, then
   * kept by this proxy's own span writes. Bounded (least recently used dropped: its next call reads it again).
   */
  private readonly attempts: BoundedMap<string, Promise<Map<string, number>>>;

  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
    maxAttempts = 2_000,
  ) {
    this.attempts = new BoundedMap(maxAttempts, { order: 'use' });
  }

  /** Attempts whose call counts are held (tests). */
  heldAttempts(): number {
    return this.attempts.size;
  }

  /** The attempt's answered calls per fingerprint; one POST /spans/search the first time, memory after. */
  private attemptCalls(rolloutId: string, attemptId: string): Promise<Map<string, number>> {
    const key = `${rolloutId}/${attemptId}`;
    const cached = this.attempts.get(key);
    if (cached !== undefined) return cached;
    const fetched = fetchJson<{ items?: Span[] }>(`${this.base}/spans/search`, {
      body: { rollout_id: rolloutId, attempt_id: attemptId, limit: -1, offset: 0 },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
    }).then((page) => {
      // The store's own rule (store/span-ops.ts callKeyOf): a span with a call key that is not an error.
      const counts = new Map<string, number>();
      for (const span of page?.items ?? []) {
        const k = span.attributes?.[CALL_KEY_ATTR];
        if (typeof k === 'string' && span.status?.status_code !== 'ERROR') counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      return counts;
    });
    fetched.catch(() => {
      if (this.attempts.peek(key) === fetched) this.attempts.delete(key);
    });
    this.attempts.set(key, fetched);
    return fetched;
  }

  /**
   * One GET /rollouts/{id} per rollout, shared by the seed and the policy resolution (rollout-policy.ts), kept
   * until the store says the rollout changed (`forget`, on a refused span write).
   */
  rollout(rolloutId: string): Promise<RolloutFacts> {
    const cached = this.facts.get(rolloutId);
    if (cached !== undefined) return cached;
    const url = `${this.base}/rollouts/${encodeURIComponent(rolloutId)}`;
    const fetched = httpRequest(url, { method: 'GET', timeoutMs: this.timeoutMs, headers: { accept: 'application/json', ...this.headers } }).then((res) => {
      if (res.status < 200 || res.status >= 300) throw new HttpError(res.status, url, res.text);
      const rollout = (res.text === '' ? null : JSON.parse(res.text)) as { metadata?: Record<string, unknown> | null; resources_id?: string | null } | null;
      const s = rollout?.metadata?.sampling_seed;
      // Rollouts enqueued by others carry no seed: their id is stable across attempts and restarts too.
      const seedBase = typeof s === 'number' || typeof s === 'string' ? `seed:${s}` : `rollout:${rolloutId}`;
      const header = res.headers[REVISION_HEADER];
      const revision = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : null;
      const facts: RolloutFacts = { seedBase, resourcesId: typeof rollout?.resources_id === 'string' ? rollout.resources_id : null, revision };
      if (this.facts.get(rolloutId) === fetched) this.factsRead.set(rolloutId, facts);
      return facts;
    });
    // A failed fetch is not kept: the next call asks the store again.
    fetched.catch(() => {
      if (this.facts.get(rolloutId) === fetched) this.facts.delete(rolloutId);
    });
    this.facts.set(rolloutId, fetched);
    return fetched;
  }

  /** The store said the rollout is no longer as `facts` say: the next call reads it again (a newer read is kept). */
  forget(rolloutId: string, facts: RolloutFacts): void {
    if (this.factsRead.get(rolloutId) === facts) this.drop(rolloutId);
  }

  private drop(rolloutId: string): void {
    this.facts.delete(rolloutId);
    this.factsRead.delete(rolloutId);
  }

  /**
   * How many answered calls of the attempt asked what `fingerprint` asks, and the latest of them: a client's retry
   * asks the store this itself (one indexed look-up, POST /spans/calls), the answer being in the store alone.
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
    while (clientRetry && (this.inFlight.get(key) ?? 0) > 0 && !signal?.aborted) await sleep(100);
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
    const attemptKey = `${rolloutId}/${attemptId}`;
    try {
      const counts = this.attemptCalls(rolloutId, attemptId);
      const [facts, alike, held] = await Promise.all([
        this.rollout(rolloutId),
        clientRetry ? this.answeredAlike(rolloutId, attemptId, fingerprint, true) : null,
        counts,
      ]);
      const recorded = alike?.last ?? null;
      const index = (alike ? alike.answered : (held.get(fingerprint) ?? 0)) + parallel;
      const seedOf = (f: RolloutFacts) => createHash('sha256').update(`${f.seedBase}/${fingerprint}/${index}`).digest().readUInt32BE(0) & 0x7fffffff;
      let settled = false;
      const written = (outcome: 'answered' | 'error' | 'failed' | 'refused') => {
        if (settled || outcome === 'refused') return; // refused: nothing stored, and the call is planned again
        settled = true;
        const current = this.attempts.peek(attemptKey);
        // Counts read again since this call planned (dropped, or evicted and re-read) may or may not hold this
        // span: drop them, so the next call reads the store, which does.
        if (outcome === 'failed' || current !== counts) {
          if (current !== undefined) this.attempts.delete(attemptKey);
          return;
        }
        if (outcome === 'answered') held.set(fingerprint, (held.get(fingerprint) ?? 0) + 1);
      };
      // Planned again from the rollout as it is now (its cached facts were dropped), keeping this call's index
      // among its twins: the seed follows the rollout's seed base, and no twin's index is given twice.
      const again = async (): Promise<CallPlan> => {
        const now = await this.rollout(rolloutId);
        return { seed: seedOf(now), recorded, release, written, facts: now, again };
      };
      return { seed: seedOf(facts), recorded, release, written, facts, again };
    } catch (err) {
      release();
      throw err;
    }
  }
}
