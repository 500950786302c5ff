// A batch whose rollouts succeeded but carry no reward trains on nothing (every advantage is 0) while looking
// fine: the run ends with reward 0 everywhere and no error. The train step counts such rollouts (metrics below);
// this file says what it means and what likely caused it, for the worker log, the progress line and the UI, and
// decides when the run pauses for it. Pure and deterministic: the workflow and the activities both use it.
import type { Metrics } from './run-types';

export const SUCCEEDED = 'rollouts/succeeded';
export const SUCCEEDED_WITHOUT_REWARD = 'rollouts/succeeded_without_reward';
/** Succeeded rollouts with only the proxy's spans: the agent's own spans (and its reward span) never arrived. */
export const SUCCEEDED_WITHOUT_AGENT_SPANS = 'rollouts/succeeded_without_agent_spans';

/** True when the batch's rollouts succeeded and none carries a reward. */
export function batchWithoutRewards(m: Metrics): boolean {
  const succeeded = m[SUCCEEDED] ?? 0;
  return succeeded > 0 && (m[SUCCEEDED_WITHOUT_REWARD] ?? 0) >= succeeded;
}

/** What to tell the operator about the batch's missing rewards, with the likely causes; null when none is missing. */
export function missingRewardNote(m: Metrics): string | null {
  const succeeded = m[SUCCEEDED] ?? 0;
  const missing = m[SUCCEEDED_WITHOUT_REWARD] ?? 0;
  if (succeeded === 0 || missing === 0) return null;
  const noSpans = m[SUCCEEDED_WITHOUT_AGENT_SPANS] ?? 0;
  const causes =
    noSpans >= missing
      ? "only the proxy's spans reached the store, none of the agents' own: their span export fails. Python Agent-lightning 0.3 " +
        'runners need the OpenTelemetry versions of agents/python/constraints-agl-0.3.txt (pip install -c it; look for ' +
        "export errors such as '_headers' in the runners' output), and must send spans to this store"
      : 'the agents report no reward: a TypeScript agent returns its reward as a number (or calls ctx.emitReward), a ' +
        'Python one returns a float from its rollout or calls agl.emit_reward';
  return `${missing} of ${succeeded} succeeded rollouts carry no reward, so they teach nothing; likely cause: ${causes}`;
}
