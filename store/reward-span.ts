// The reward annotation span of §6.2 (what Python's `agl.emit_reward(x)` records): a zero-length span named
// `agentlightning.annotation` with `agentlightning.reward.0.name = "primary"` and `.value = x`.
import { newSpanId, newTraceId } from './ids';
import type { Span } from './types';
import { REWARD_NAME_ATTR, REWARD_SPAN_NAME, REWARD_VALUE_ATTR } from '../spans/rewards';

export function rewardSpan(rolloutId: string, attemptId: string, sequenceId: number, reward: number, nowSec = Date.now() / 1000): Span {
  if (typeof reward !== 'number' || !Number.isFinite(reward)) throw new TypeError(`reward must be a finite number, got ${String(reward)}`);
  const traceId = newTraceId();
  const spanId = newSpanId();
  return {
    rollout_id: rolloutId,
    attempt_id: attemptId,
    sequence_id: sequenceId,
    trace_id: traceId,
    span_id: spanId,
    parent_id: null,
    name: REWARD_SPAN_NAME,
    status: { status_code: 'OK', description: null },
    attributes: { [REWARD_NAME_ATTR]: 'primary', [REWARD_VALUE_ATTR]: reward },
    events: [],
    links: [],
    start_time: nowSec,
    end_time: nowSec,
    context: { trace_id: traceId, span_id: spanId, is_remote: false, trace_state: {} },
    parent: null,
    resource: { attributes: {}, schema_url: '' },
  };
}

/** The reward of a span, as the adapter reads it (v0.3 attribute first, then the v0.2 `reward` attribute). */
export function rewardOf(span: Span): number | null {
  const v = span.attributes[REWARD_VALUE_ATTR];
  if (typeof v === 'number') return v;
  if (span.name === REWARD_SPAN_NAME && typeof span.attributes['reward'] === 'number') return span.attributes['reward'] as number;
  return null;
}
