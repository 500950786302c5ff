// A reward reported from inside an agent workflow, mid-episode (for workflow code: deterministic, no Node APIs).
// `reportReward(x)` runs the training worker's `aglReportReward` activity on the training run's task queue, which
// records x under the rollout and attempt the workflow plays; outside a training rollout it does nothing, so the
// same workflow runs in production unchanged.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { AgentRolloutMemo } from './rollout-ids';

export interface ReportRewardInput {
  rolloutId: string;
  attemptId: string;
  storeAddress: string;
  reward: number;
}

/** Records `reward` for the rollout this workflow plays; returns false (and does nothing) outside training. */
export async function reportReward(reward: number): Promise<boolean> {
  const memo = workflowInfo().memo?.agl as AgentRolloutMemo | undefined;
  if (!memo?.rolloutId) return false;
  const { aglReportReward } = proxyActivities<{ aglReportReward(input: ReportRewardInput): Promise<void> }>({
    taskQueue: memo.trainingTaskQueue,
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 10 },
  });
  await aglReportReward({ rolloutId: memo.rolloutId, attemptId: memo.attemptId, storeAddress: memo.storeAddress, reward });
  return true;
}
