// From finished rollouts to the cookbook's TrajectoryGroups: spans of each rollout's latest attempt → triplets
// (through the adapter the config picks) → transitions (the seed's reconstruct_transitions), grouped in task
// order. Done regardless of a rollout's status, as the seed does; a failed rollout without spans is an empty
// trajectory with reward 0.
import { makeTrajectoryGroup, reconstructTransitions, type RolloutStatus, type TrajectoryGroup } from '../rl';
import type { StoreClient } from '../store/client';
import type { StoreSpan, Triplet } from '../rl/adapters/types';
import type { CollectedGroup, Metrics, RunSettings } from '../shared/run-types';
import { makeTripletAdapter } from '../rl/adapters';
import { POLICY_STEP_ATTRIBUTE, PROXY_SPAN_NAME } from '../proxy/span';
import { oldestServedStep } from '../rl/served-staleness';
import { getRewardValue } from '../spans/rewards';
import { SUCCEEDED, SUCCEEDED_WITHOUT_AGENT_SPANS, SUCCEEDED_WITHOUT_REWARD } from '../shared/missing-rewards';

export interface BuiltGroups {
  groups: TrajectoryGroup[];
  /** Per group: the oldest policy step that served any of its calls (agl.policy.step of its spans), or null. */
  servedSteps: (number | null)[];
  /** Counts of what reconstruction left out, as metrics. */
  notes: Metrics;
}

export async function buildTrajectoryGroups(store: StoreClient, settings: RunSettings, collected: CollectedGroup[], signal?: AbortSignal): Promise<BuiltGroups> {
  const adapt = makeTripletAdapter(settings);
  const notes: Metrics = {
    'rollouts/skipped_triplets_no_token_ids': 0, 'rollouts/skipped_triplets_empty': 0, 'rollouts/missing_logprobs': 0,
    [SUCCEEDED]: 0, [SUCCEEDED_WITHOUT_REWARD]: 0, [SUCCEEDED_WITHOUT_AGENT_SPANS]: 0,
  };
  const groups: TrajectoryGroup[] = [];
  const servedSteps: (number | null)[] = [];
  for (const group of collected) {
    const trajectories = [];
    const served: unknown[] = [];
    for (const [member, rolloutId] of group.rolloutIds.entries()) {
      const page = await store.querySpans(rolloutId, 'latest', {}, { timeoutMs: 60_000, signal });
      // A proxy call that failed (sampler or trainer down) left a span with an ERROR status and no tokens; the agent
      // never saw it and retried. It is not a turn, so it must not count (a run with a trainer restart would
      // otherwise report different skipped-triplet metrics than one without).
      const spans = (page.items as unknown as StoreSpan[]).filter((s) => !(s.name === PROXY_SPAN_NAME && s.status?.status_code === 'ERROR'));
      if (group.statuses[member] === 'succeeded') countRewards(notes, spans);
      for (const s of spans) if (s.name === PROXY_SPAN_NAME) served.push(s.attributes?.[POLICY_STEP_ATTRIBUTE]);
      const triplets: Triplet[] = spans.length === 0 ? [] : adapt(spans);
      const { trajectory, notes: n } = reconstructTransitions(triplets);
      notes['rollouts/skipped_triplets_no_token_ids']! += n.skippedNoTokenIds;
      notes['rollouts/skipped_triplets_empty']! += n.skippedEmptyTokenIds;
      notes['rollouts/missing_logprobs']! += n.missingLogprobs + n.logprobCountMismatch;
      trajectories.push(trajectory);
    }
    groups.push(makeTrajectoryGroup(trajectories, group.statuses as RolloutStatus[]));
    servedSteps.push(oldestServedStep(served));
  }
  return { groups, servedSteps, notes };
}

/** A succeeded rollout: does it carry a reward, and did any span besides the proxy's arrive (missing-rewards.ts)? */
function countRewards(notes: Metrics, spans: StoreSpan[]): void {
  notes[SUCCEEDED]! += 1;
  if (!spans.some((s) => getRewardValue(s as never) !== null)) notes[SUCCEEDED_WITHOUT_REWARD]! += 1;
  if (spans.every((s) => s.name === PROXY_SPAN_NAME)) notes[SUCCEEDED_WITHOUT_AGENT_SPANS]! += 1;
}
