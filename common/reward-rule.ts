// The one rule for a reward, wherever it enters (a v0.3 span over JSON or OTLP, an Agent-lightning 1.0 reward
// event, a runner's return value): a finite number within ±1e12. Past that bound a reward is a bug, not a score,
// and far enough out (about 1e38 from its group's mean) it turns the group's advantages into ±Infinity on the
// float32 wire, so the trainer would refuse the whole batch.

export const MAX_ABS_REWARD = 1e12;

/** Why a value cannot be a reward, or null when it can. */
export function rewardValueProblem(v: unknown): string | null {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    const shown = typeof v === 'string' ? JSON.stringify(v.slice(0, 80)) : typeof v === 'number' ? String(v) : v === undefined ? 'nothing' : JSON.stringify(v) ?? typeof v;
    return `the reward must be a finite number, got ${shown}`;
  }
  if (Math.abs(v) > MAX_ABS_REWARD) return `the reward ${v} is beyond ±${MAX_ABS_REWARD} (rewards this large cannot be trained on)`;
  return null;
}
