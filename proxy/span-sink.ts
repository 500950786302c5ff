// Where rollout-scoped calls record their spans: the LightningStore REST API (sequence id from
// POST /v1/agl/spans/next at request start, span via POST /v1/agl/spans), or memory for tests. The store sink
// also plans each call: its seed (rollout-seed.ts) and the policy its rollout was enqueued under (rollout-policy.ts).
import { fetchJson, HttpError } from '../common/http';
import { RolloutSeeds, type CallPlan } from './rollout-seed';
import { RolloutPolicies } from './rollout-policy';
import { PROXY_SPAN_NAME } from './span';
import type { Span } from '../store/types';

export interface SpanSink {
  nextSequenceId(rolloutId: string, attemptId: string): Promise<number>;
  /** Writes the span; with `signal`, keeps trying through transient failures until it aborts. */
  addSpan(span: Span, signal?: AbortSignal): Promise<void>;
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
  private readonly seeds: RolloutSeeds;
  private readonly policies: RolloutPolicies;

  async planCall(rolloutId: string, attemptId: string, fingerprint: string, clientRetry: boolean, signal?: AbortSignal): Promise<CallPlan> {
    // In parallel, sharing the one rollout fetch: a cached rollout and resources cost no request at all.
    const [plan, policy] = await Promise.allSettled([this.seeds.plan(rolloutId, attemptId, fingerprint, clientRetry, signal), this.policies.policyOf(rolloutId)]);
    if (plan.status === 'rejected') throw plan.reason;
    if (policy.status === 'rejected') {
      plan.value.release();
      throw policy.reason;
    }
    return { ...plan.value, policy: policy.value };
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

  async nextSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    const res = await fetchJson<{ sequence_id: number }>(`${this.base}/spans/next`, {
      body: { rollout_id: rolloutId, attempt_id: attemptId },
      timeoutMs: this.timeoutMs,
      headers: this.headers,
    });
    if (!Number.isInteger(res?.sequence_id)) throw new Error(`store answered /spans/next without a sequence_id: ${JSON.stringify(res)}`);
    return res.sequence_id;
  }

  async addSpan(span: Span, signal?: AbortSignal): Promise<void> {
    // A span is what training reads, and the store may be restarting: try again until the call's deadline. The
    // same span (same span_id) is sent each time and the store keeps one copy, so a write that landed although its
    // answer was lost is not doubled, and the agent never has to repeat a call whose turn was in fact recorded.
    for (let pauseMs = 200; ; pauseMs = Math.min(2_000, pauseMs * 2)) {
      try {
        await fetchJson(`${this.base}/spans`, { body: span, timeoutMs: this.timeoutMs, headers: this.headers, signal });
        return;
      } catch (err) {
        const refused = err instanceof HttpError && err.status < 500 && err.status !== 408 && err.status !== 429;
        if (refused || signal === undefined || signal.aborted) throw err;
        await new Promise((r) => setTimeout(r, pauseMs));
        if (signal.aborted) throw err;
      }
    }
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
