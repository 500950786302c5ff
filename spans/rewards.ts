// Rewards on spans, §6.2: the attribute names of the reward annotation, and reading a span's reward value
// (agentlightning/emitter/reward.py: get_reward_value).
import { filterAndUnflatten } from './attributes';

export const AGL_ANNOTATION = 'agentlightning.annotation';
export const AGL_OPERATION = 'agentlightning.operation';
export const AGL_REWARD = 'agentlightning.reward';

/** The reward annotation span (what Python's `agl.emit_reward(x)` records): its name, value and reward name. */
export const REWARD_SPAN_NAME = AGL_ANNOTATION;
export const REWARD_VALUE_ATTR = 'agentlightning.reward.0.value';
export const REWARD_NAME_ATTR = 'agentlightning.reward.0.name';
const OPERATION_NAME = 'agentlightning.operation.name';

type SpanLike = { name: string; attributes: Record<string, unknown> };

function asNumber(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
  return null;
}

/** v0.3 format: `agentlightning.reward.{i}.name/value`, a list whose first entry is the primary reward. */
function primaryFromRewardList(attrs: Record<string, unknown>): number | null | undefined {
  if (!Object.keys(attrs).some((k) => k.startsWith(AGL_REWARD))) return undefined;
  const list = filterAndUnflatten(attrs, AGL_REWARD);
  // Python validates List[{name: str, value: float}] and raises on a bad shape; we treat it as no reward.
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const first = list[0] as { name?: unknown; value?: unknown } | null;
  if (first === null || typeof first !== 'object' || typeof first.name !== 'string') return undefined;
  return asNumber(first.value) ?? undefined;
}

/** The primary reward a span carries, or null when it is not a reward span. */
export function getRewardValue(span: SpanLike): number | null {
  const attrs = (span.attributes ?? {}) as Record<string, unknown>;
  const fromList = primaryFromRewardList(attrs);
  if (fromList !== undefined) return fromList;

  // AgentOps legacy: {"type": "reward", "value": v} as a JSON string output.
  for (const key of ['agentops.task.output', 'agentops.entity.output']) {
    const output = attrs[key];
    if (!output) continue;
    let dict: unknown = null;
    if (typeof output === 'string') {
      try {
        dict = JSON.parse(output);
      } catch {
        dict = null;
      }
    } else if (typeof output === 'object') dict = output;
    if (dict && typeof dict === 'object' && !Array.isArray(dict) && (dict as Record<string, unknown>).type === 'reward') {
      const value = (dict as Record<string, unknown>).value;
      return value === null || value === undefined ? null : asNumber(value);
    }
  }

  // v0.2 format: an annotation span with a plain `reward` attribute.
  if (span.name === AGL_ANNOTATION && Object.keys(attrs).length > 0) {
    const value = attrs.reward;
    return value === null || value === undefined ? null : asNumber(value);
  }
  return null;
}

/** TraceTree.is_reward_span: carries a reward, or is an `agentlightning.reward` operation span. */
export function isRewardSpan(span: SpanLike): boolean {
  if (getRewardValue(span) !== null) return true;
  return span.name === AGL_OPERATION && (span.attributes ?? {})[OPERATION_NAME] === AGL_REWARD;
}
