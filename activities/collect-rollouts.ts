import { log } from '@temporalio/activity';
import type { CollectedBatch, RunSettings } from '../shared/run-types';
import { runDataset, trainBatchTasks } from './dataset-snapshot';
import { runKey, runRolloutBatch, type RolloutRequest } from './rollout-batch';
import { storeFor } from './services';

/**
 * The batch's groupSize rollouts per task through the store. Returns where they are (their key prefix) and how
 * they ended, not their ids: trainStep reads them from the store (batch-ref.ts), so the result, and what the
 * workflow passes on, is the same size for 16 rollouts as for 4,096.
 */
export async function collectRollouts(settings: RunSettings, batch: number, resourcesId: string, datasetSha256: string): Promise<CollectedBatch> {
  const tasks = trainBatchTasks(await runDataset(settings, datasetSha256), batch);
  const G = settings.datasetBuilder.groupSize;
  const keyPrefix = `${runKey(settings)}/train/${batch}/`;
  const requests: RolloutRequest[] = tasks.flatMap(({ taskIndex, task }, group) =>
    Array.from({ length: G }, (_, member) => ({
      key: `${keyPrefix}${group}/${member}`,
      seedKey: `${settings.datasetBuilder.seed}/train/${batch}/${group}/${member}`,
      group,
      task,
      metadata: { agl_run: settings.runName, batch, group, member, task_index: taskIndex },
    })),
  );
  const { counts } = await runRolloutBatch(storeFor(settings), settings, 'train', resourcesId, keyPrefix, requests, tasks.length, (m) => log.info(m));
  return { ref: { keyPrefix, numGroups: tasks.length, groupSize: G }, counts };
}
