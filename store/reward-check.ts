// Rewards are checked where they enter: a span whose reward is not a finite number, or lies beyond ±1e12, is
// refused with the reason. Past that bound a reward is a bug, not a score, and far enough out (about 1e38 from
// its group's mean) it turns the group's advantages into ±Infinity on the float32 wire, so the trainer refuses the
// whole batch; rl/sendable.ts checks advantages again where they leave.
import { getRewardValue } from './adapters/rewards';
import { REWARD_VALUE_ATTR } from './types';

export const MAX_ABS_REWARD = 1e12;

/** Why a span's reward cannot be stored, or null when it carries none or a good one. */
export function rewardProblem(name: string, attributes: Record<string, unknown> | null | undefined): string | null {
  const attrs = attributes ?? {};
  if (REWARD_VALUE_ATTR in attrs) {
    const v = attrs[REWARD_VALUE_ATTR];
    if (typeof v !== 'number' || !Number.isFinite(v)) return `${REWARD_VALUE_ATTR} must be a finite number, got ${String(v)}`;
  }
  const reward = getRewardValue({ name, attributes: attrs });
  if (reward === null) return null;
  if (!Number.isFinite(reward)) return `the reward must be a finite number, got ${String(reward)}`;
  if (Math.abs(reward) > MAX_ABS_REWARD) return `the reward ${reward} is beyond ±${MAX_ABS_REWARD} (rewards this large cannot be trained on)`;
  return null;
}
