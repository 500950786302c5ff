// Where rollout-scoped calls record their spans: the LightningStore REST API (POST /v1/agl/spans, the store
// numbering the span as it stores it: one store request per call), or memory for tests. The
// store sink also plans each call: its seed (rollout-seed.ts) and the policy its rollout was enqueued under
// (rollout-policy.ts), both from memory after the first call of an attempt.
import { fetchJson, HttpError } from '../common/http';
import { httpRequest } from '../common/http-transport';
import { RolloutSeeds, type CallPlan, type RolloutFacts } from './rollout-seed';
import { RolloutPolicies } from './rollout-policy';
import type { PolicySpec } from './policy-spec';
import { PROXY_SPAN_NAME } from './span';
import { IF_REVISION_HEADER, REVISION_HEADER, type Span } from '../store/types';
import { retry } from '../common/retry';

/**
 * The store refused a span because its rollout changed since the call was planned (412: another revision): nothing
 * was stored, the rollout's cached facts are dropped, and the call is planned again (internal-call.ts).
 */
export class RolloutChangedError extends Error {
  override readonly name = 'RolloutChangedError';
}

export interface SpanSink {
  /** A sequence id taken at request start (sinks that do not number spans as they write them). */
  nextSequenceId(rolloutId: string, attemptId: string): Promise<number>;
  /**
   * The sink numbers a span sent with a negative sequence_id as it stores it (the store's own counter, §3.6), and
   * addSpan resolves with that number: the proxy then takes no sequence id before the call.
   */
  readonly numbersSpans?: boolean;
  /**
   * Writes the span; with `signal`, keeps trying through transient failures until it aborts. Resolves with the
   * stored span's sequence id where the sink numbers spans. With `facts` (the plan's), the store keeps it only while
   * the rollout is as those facts were read, else RolloutChangedError.
   */
  addSpan(span: Span, signal?: AbortSignal, facts?: RolloutFacts): Promise<number | void>;
  /**
   * The seed of a call, or its recorded answer (rollout-seed.ts), and the policy of its rollout (`policy`, null:
   * the current one; rollout-policy.ts); sinks without it leave the seed alone and serve the current policy.
   */
  planCall?(rolloutId: string, attemptId: string, fingerprint: string, clientRetry: boolean, signal?: AbortSignal): Promise<CallPlan>;
  /** The proxy spans of a rollout (any attempt) with this trace id: how a Responses conversation is found again. */
  spansOfTrace?(rolloutId: string, traceId: string, signal?: AbortSignal): Promise<Span[]>;
}

export class StoreSpanSink implements SpanSink {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  constructor(storeUrl: string, opts: { token?: string; timeoutMs?: number } = {}) {
    this.base = storeUrl.replace(/\/+$/, '') + '/v1/agl';
    this.headers = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.seeds = new RolloutSeeds(this.base, this.headers, this.timeoutMs);
    this.policies = new RolloutPolicies(this.base, this.headers, this.timeoutMs, (id) => this.seeds.rollout(id));
  }
  private readonly timeoutMs: number;
  /** Exposed for tests (how many attempts' call counts it holds). */
  readonly seeds: RolloutSeeds;
  private readonly policies: RolloutPolicies;
  readonly numbersSpans = true;

  async planCall(rolloutId: string, attemptId: string, fingerprint: string, clientRetry: boolean, signal?: AbortSignal): Promise<CallPlan> {
    // In parallel, sharing the one rollout fetch: a cached rollout and resources cost no request at all.
    const [plan, policy] = await Promise.allSettled([this.seeds.plan(rolloutId, attemptId, fingerprint, clientRetry, signal), this.policies.policyOf(rolloutId)]);
    if (plan.status === 'rejected') throw plan.reason;
    if (policy.status === 'rejected') {
      plan.value.release();
      throw policy.reason;
    }
    return this.withPolicy(rolloutId, plan.value, policy.value);
  }

  /** The plan with its rollout's policy; planned again, it reads both again (the policy from the rollout's resources now). */
  private withPolicy(rolloutId: string, plan: CallPlan, policy: PolicySpec | null): CallPlan {
    const again = plan.again;
    return {
      ...plan,
      policy,
      again: again && (async () => {
        const next = await again();
        return this.withPolicy(rolloutId, next, await this.policies.policyOf(rolloutId));
      }),
    };
  }

  async spansOfTrace(rolloutId: string, traceId: string, signal?: AbortSignal): Promise<Span[]> {
    const page = await fetchJson<{ items?: Span[] }>(`${this.base}/spans/search`, {
      body: { rollout_id: rolloutId, trace_id: traceId, name: PROXY_SPAN_NAME, limit: -1, offset: 0 },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
      signal,
    });
    return page.items ?? [];
  }

  private async storedSequenceId(span: Span, signal?: AbortSignal): Promise<number> {
    const page = await fetchJson<{ items?: Span[] }>(`${this.base}/spans/search`, {
      body: { rollout_id: span.rollout_id, attempt_id: span.attempt_id, span_id: span.span_id, limit: 1, offset: 0 },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
      signal,
    });
    const found = page.items?.find((s) => s.span_id === span.span_id);
    if (!found || !Number.isInteger(found.sequence_id)) throw new Error(`store answered the span write with null and holds no span ${span.span_id}`);
    return found.sequence_id;
  }

  /** A sequence id from POST /spans/next (the proxy no longer takes one per call: the store numbers each span it stores). */
  async nextSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    const res = await fetchJson<{ sequence_id: number }>(`${this.base}/spans/next`, {
      body: { rollout_id: rolloutId, attempt_id: attemptId },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
    });
    if (!Number.isInteger(res?.sequence_id)) throw new Error(`store answered /spans/next without a sequence_id: ${JSON.stringify(res)}`);
    return res.sequence_id;
  }

  async addSpan(span: Span, signal?: AbortSignal, facts?: RolloutFacts): Promise<number> {
    // A span is what training reads, and the store may be restarting: try again until the call's deadline. The
    // same span (same span_id) is sent each time and the store keeps one copy, so a write that landed although its
    // answer was lost is not doubled, and the agent never has to repeat a call whose turn was in fact recorded.
    const url = `${this.base}/spans`;
    const body = JSON.stringify(span);
    const refused = (err: unknown) =>
      err instanceof RolloutChangedError || (err instanceof HttpError && err.status < 500 && err.status !== 408 && err.status !== 429);
    // Without a signal (no deadline to stop at) one try is all.
    return retry(async () => {
      // Read at each try: a write accepted meanwhile may have raised it (its heartbeat; the facts still hold).
      const revision = facts?.revision ?? null;
      // return=minimal: the store answers the span's number, not the span echoed back (a store that ignores it
      // echoes it, which holds the number too).
      const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json', prefer: 'return=minimal', ...this.headers };
      if (revision !== null) headers[IF_REVISION_HEADER] = String(revision);
      const res = await httpRequest(url, { method: 'POST', headers, body, timeoutMs: this.timeoutMs, signal });
      if (res.status === 412 && revision !== null) {
        this.seeds.forget(span.rollout_id, facts!);
        throw new RolloutChangedError(`rollout ${span.rollout_id} changed since the call was planned (it was at revision ${revision}): ${res.text.slice(0, 300)}`);
      }
      if (res.status < 200 || res.status >= 300) throw new HttpError(res.status, url, res.text);
      const stored = (res.text === '' ? null : JSON.parse(res.text)) as Pick<Span, 'sequence_id'> | null;
      if (stored && revision !== null) {
        // Accepted at `revision`: the revision after it differs only by this write's own effects (a heartbeat's
        // status). Not when the store already held the span (null): the revision now says nothing of the facts.
        const after = Number(res.headers[REVISION_HEADER]);
        if (Number.isInteger(after) && after > facts!.revision!) facts!.revision = after;
      }
      if (span.sequence_id >= 0) return span.sequence_id;
      if (Number.isInteger(stored?.sequence_id)) return stored!.sequence_id;
      // null: the store already held this span (an earlier try landed, its answer lost); read the number it got.
      return await this.storedSequenceId(span, signal);
    }, { firstPauseMs: 200, maxPauseMs: 2_000, retryable: (err) => signal !== undefined && !refused(err), signal });
  }
}

/** Keeps spans in memory; sequence ids count per rollout from 1, as the store does. */
export class MemorySpanSink implements SpanSink {
  readonly spans: Span[] = [];
  private readonly counters = new Map<string, number>();

  async nextSequenceId(rolloutId: string): Promise<number> {
    const n = (this.counters.get(rolloutId) ?? 0) + 1;
    this.counters.set(rolloutId, n);
    return n;
  }

  async addSpan(span: Span): Promise<void> {
    this.spans.push(span);
  }

  async spansOfTrace(rolloutId: string, traceId: string): Promise<Span[]> {
    return this.spans.filter((s) => s.rollout_id === rolloutId && s.trace_id === traceId);
  }
}
