// How an agent workflow knows which rollout and attempt it plays, with nothing in the agent's code: the training
// run starts it under a workflow id that names both, and puts the same in its memo. Activities of the workflow
// (its model calls) read the id from their own info; workflow code reads the memo.
// Plain functions only: imported by workflow code, activities and the training side alike.

export interface RolloutScope {
  rolloutId: string;
  attemptId: string;
}

/** What the training run puts in an agent workflow's memo under `agl`. */
export interface AgentRolloutMemo extends RolloutScope {
  /** The training run's name and its workflow id (the UI link back to it). */
  runName: string;
  trainingWorkflowId: string;
  /** The training worker's task queue: where `reportReward` (agents/temporal/workflow-reward.ts) goes. */
  trainingTaskQueue: string;
  storeAddress: string;
  proxyUrl: string;
}

const PREFIX = 'agl-rollout';

/** The agent workflow id of one rollout attempt; starting it again finds the same workflow. */
export function agentRolloutWorkflowId(scope: RolloutScope): string {
  return `${PREFIX}:${scope.rolloutId}:${scope.attemptId}`;
}

/** The rollout and attempt a workflow id names, or null when the workflow is not a training rollout. */
export function rolloutScopeOf(workflowId: string): RolloutScope | null {
  const m = /^agl-rollout:([^:]+):([^:]+)$/.exec(workflowId);
  return m ? { rolloutId: m[1]!, attemptId: m[2]! } : null;
}
