// What an agent's return value means for its rollout's reward; the reward span itself is the store's format
// (store/reward-span.ts).
import { MAX_ABS_REWARD, rewardValueProblem } from '../common/reward-rule';

/**
 * What an agent's return value records: a finite number is its reward; nothing (undefined or null) means it
 * emitted its reward itself, or has none. Anything else (a string, NaN, an object) is a mistake in the agent, and
 * an error rather than a rollout silently without reward.
 */
export function rewardFromResult(result: unknown): number | null {
  if (result === undefined || result === null) return null;
  if (rewardValueProblem(result) === null) return result as number;
  const shown = typeof result === 'string' ? JSON.stringify(result.slice(0, 80)) : typeof result === 'number' ? String(result) : typeof result;
  throw new TypeError(`the agent returned ${shown}; an agent returns its reward as a finite number within ±${MAX_ABS_REWARD}, or nothing when it emitted the reward itself`);
}
