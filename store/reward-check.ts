// Rewards are checked where they enter: a span whose reward breaks the one reward rule (common/reward-rule.ts)
// is refused with the reason; rl/sendable.ts checks advantages again where they leave.
import { MAX_ABS_REWARD, rewardValueProblem } from '../common/reward-rule';
import { getRewardValue, REWARD_VALUE_ATTR } from '../spans/rewards';

export { MAX_ABS_REWARD };

/** Why a span's reward cannot be stored, or null when it carries none or a good one. */
export function rewardProblem(name: string, attributes: Record<string, unknown> | null | undefined): string | null {
  const attrs = attributes ?? {};
  if (REWARD_VALUE_ATTR in attrs) {
    const v = attrs[REWARD_VALUE_ATTR];
    if (typeof v !== 'number' || !Number.isFinite(v)) return `${REWARD_VALUE_ATTR} must be a finite number, got ${String(v)}`;
  }
  const reward = getRewardValue({ name, attributes: attrs });
  if (reward === null) return null;
  return rewardValueProblem(reward);
}
