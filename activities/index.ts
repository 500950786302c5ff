// Every activity the worker registers. Activities get their credentials from the worker's environment, never
// from workflow history, so secrets stay out of history.
import { healthActivities } from './health';
import { cancelGroups } from './cancel-groups';
import { collectGroup } from './collect-group';
import { collectRollouts } from './collect-rollouts';
import { initPolicy } from './init-policy';
import { prepareRun } from './prepare-run';
import { publishPolicy } from './publish-policy';
import { logMetrics, saveCheckpoint } from './record-run';
import { runEvaluation } from './run-evaluation';
import { trainStep } from './train-step';
import type { TrainingActivities } from './types';
import { failingUnfixably } from './unfixable';
import { aglReportReward } from './report-reward';
import { sweepActivities } from './sweep-watch';

export function createActivities() {
  const training: TrainingActivities = {
    prepareRun,
    initPolicy,
    publishPolicy,
    runEvaluation,
    collectRollouts,
    collectGroup,
    cancelGroups,
    trainStep,
    saveCheckpoint,
    logMetrics,
  };
  // An error that a retry cannot fix fails the activity for good, with its cause (unfixable.ts).
  const guarded = Object.fromEntries(Object.entries(training).map(([name, fn]) => [name, failingUnfixably(name, fn as (...a: unknown[]) => Promise<unknown>)])) as unknown as TrainingActivities;
  // Called by agent workflows (agents/temporal/workflow-reward.ts), not by the training workflow.
  // Called by sweep workflows (workflows/sweep.ts).
  return { ...healthActivities, ...guarded, aglReportReward, ...sweepActivities };
}

export type Activities = ReturnType<typeof createActivities>;
