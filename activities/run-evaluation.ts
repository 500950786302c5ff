import { Context, log } from '@temporalio/activity';
import { computeTrajectoryMetrics, prefixMetrics } from '../rl';
import type { Metrics, RunSettings } from '../shared/run-types';
import { runDataset, valTasks } from './dataset-snapshot';
import { runKey, runRolloutBatch, type RolloutRequest } from './rollout-batch';
import { storeFor } from './services';
import { buildTrajectoryGroups } from './trajectories';

/** The seed's AGLTestSetEvaluator: every validation task once (group size 1), `test/env/all/...` metrics. */
export async function runEvaluation(settings: RunSettings, batch: number, resourcesId: string, datasetSha256: string): Promise<Metrics> {
  const tasks = valTasks(await runDataset(settings, datasetSha256));
  if (tasks.length === 0) return { 'test/skipped_empty_val': 1 };
  const keyPrefix = `${runKey(settings)}/val/${batch}/`;
  const requests: RolloutRequest[] = tasks.map(({ taskIndex, task }, group) => ({
    key: `${keyPrefix}${group}/0`,
    seedKey: `${settings.datasetBuilder.seed}/val/${batch}/${group}/0`,
    group,
    task,
    metadata: { agl_run: settings.runName, batch, group, member: 0, task_index: taskIndex },
  }));
  const store = storeFor(settings);
  const collected = await runRolloutBatch(store, settings, 'val', resourcesId, keyPrefix, requests, tasks.length, (m) => log.info(m));
  const { groups } = await buildTrajectoryGroups(store, settings, collected.groups, Context.current().cancellationSignal);
  return prefixMetrics('test/', computeTrajectoryMetrics(groups, []));
}
