import { log } from '@temporalio/activity';
import type { CollectedBatch, RunSettings } from '../workflows/run-types';
import { loadDataset, trainBatchTasks } from './dataset-snapshot';
import { runKey, runRolloutBatch, type RolloutRequest } from './rollout-batch';
import { storeFor } from './services';

/** The batch's groupSize rollouts per task through the store, grouped in task order. */
export async function collectRollouts(settings: RunSettings, batch: number, resourcesId: string, datasetSha256: string): Promise<CollectedBatch> {
  const tasks = trainBatchTasks(loadDataset(settings.logPath, datasetSha256), batch);
  const G = settings.datasetBuilder.groupSize;
  const requests: RolloutRequest[] = tasks.flatMap(({ taskIndex, task }, group) =>
    Array.from({ length: G }, (_, member) => ({
      key: `${runKey(settings)}/train/${batch}/${group}/${member}`,
      seedKey: `${settings.datasetBuilder.seed}/train/${batch}/${group}/${member}`,
      group,
      task,
      metadata: { agl_run: settings.runName, batch, group, member, task_index: taskIndex },
    })),
  );
  return runRolloutBatch(storeFor(settings), settings, 'train', resourcesId, requests, tasks.length, (m) => log.info(m));
}
