// The activity behind agents/temporal/workflow-reward.ts: an agent workflow's mid-episode reward, recorded as the
// reward span of its rollout attempt (the reward span has its own id, so a retried activity stores it once only
// when it lands once; a retry after a lost answer may record it again, which the adapter reads as the same reward).
import { Context } from '@temporalio/activity';
import type { ReportRewardInput } from '../agents/temporal/workflow-reward';
import { rolloutScopeOf } from '../agents/temporal/rollout-ids';
import { storeClient } from './services';
import { recordReward } from './agent-workflows';

export async function aglReportReward(input: ReportRewardInput): Promise<void> {
  if (typeof input.reward !== 'number' || !Number.isFinite(input.reward)) throw new TypeError(`reportReward: the reward must be a finite number, got ${String(input.reward)}`);
  // Only the workflow that plays a rollout reports its reward.
  const caller = Context.current().info.workflowExecution?.workflowId ?? '';
  const scope = rolloutScopeOf(caller);
  if (!scope || scope.rolloutId !== input.rolloutId || scope.attemptId !== input.attemptId) {
    throw new Error(`reportReward from workflow ${caller}, which does not play rollout ${input.rolloutId} attempt ${input.attemptId}`);
  }
  await recordReward(storeClient(input.storeAddress), input.rolloutId, input.attemptId, input.reward);
}
