// Grades one agent-workflow episode with the grader activity the run config names (agentWorkflow.grader): the
// activity is registered on the agent's worker, so it is called on the agent's task queue, and an activity is
// called from a workflow. Started per graded attempt by activities/agent-workflows.ts.
import { proxyActivities } from '@temporalio/workflow';

export interface GradeEpisodeInput {
  taskQueue: string;
  grader: string;
  task: unknown;
  result: unknown;
}

export async function aglGradeEpisode(input: GradeEpisodeInput): Promise<number> {
  const graders = proxyActivities<Record<string, (task: unknown, result: unknown) => Promise<number>>>({
    taskQueue: input.taskQueue,
    startToCloseTimeout: '5 minutes',
    retry: { maximumAttempts: 3 },
  });
  return graders[input.grader]!(input.task, input.result);
}
