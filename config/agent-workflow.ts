// Ours: where a run's rollouts come from when they are not served by runners polling the store. A run names either
// the agent its runners run (`agent`) or an agent workflow (`agentWorkflow`): a Temporal workflow of the user's,
// started once per rollout attempt on its own task queue (activities/agent-workflows.ts).
import { z } from 'zod';

const workflowTypeName = z.string().regex(/^[A-Za-z_$][\w$.-]{0,199}$/, 'a workflow or activity type name');

export const AgentWorkflowSchema = z.strictObject({
  /** The agent's workflow type: started with the task as its only argument. */
  type: workflowTypeName,
  /** The task queue the agent's worker polls. */
  taskQueue: z.string().min(1).max(200),
  /** Its namespace; null = the training run's. */
  namespace: z.string().min(1).max(200).nullable().default(null),
  /**
   * An activity registered on the agent's worker that grades an episode: called with (task, the workflow's result)
   * and returning the reward. null = the reward is the number the workflow returns (or what it reported itself).
   */
  grader: workflowTypeName.nullable().default(null),
});

export type AgentWorkflowConfig = z.output<typeof AgentWorkflowSchema>;

/** A runner's agent name: what runners say they run and runs name (letters, digits, `.`, `_`, `-`, `/`, `:`, `@`). */
export const AgentName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,99}$/, 'letters, digits and . _ : @ / - only, at most 100 characters');

/** The routing name of an agent workflow's rollouts: no runner serves them, the run's own collect activity does. */
export function agentWorkflowRoute(cfg: Pick<AgentWorkflowConfig, 'type' | 'taskQueue'>): string {
  return `temporal-workflow:${cfg.taskQueue}/${cfg.type}`;
}

/** Where a run's rollouts are routed: its agent workflow's route, the agent it names, or null (any runner naming none). */
export function rolloutRoute(cfg: { agent?: string | null; agentWorkflow?: Pick<AgentWorkflowConfig, 'type' | 'taskQueue'> | null }): string | null {
  return cfg.agentWorkflow ? agentWorkflowRoute(cfg.agentWorkflow) : (cfg.agent ?? null);
}
