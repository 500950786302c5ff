import { Context, log } from '@temporalio/activity';
import type { StartedGroup } from '../shared/async-groups';
import { groupKey } from '../shared/async-groups';
import type { GroupResult, RunSettings } from '../shared/run-types';
import { runDataset, trainBatchTasks } from './dataset-snapshot';
import { runKey, runRolloutBatch, type RolloutRequest } from './rollout-batch';
import { storeFor } from './services';
import { buildTrajectoryGroups } from './trajectories';
import { allSame, totalRewards } from '../rl';

/**
 * Async runs: the groupSize rollouts of dataset group `group.g` (batch g / batchSize, position g % batchSize, so
 * the async run trains the same tasks as the synchronous one) under the resources of the policy it started with.
 * Keys and seeds name the group and its sample count, not the policy, so a retry or a continued run finds the
 * same rollouts and a resampled group samples afresh.
 */
export async function collectGroup(settings: RunSettings, group: StartedGroup, datasetSha256: string): Promise<GroupResult> {
  const B = settings.datasetBuilder.batchSize;
  const tasks = trainBatchTasks(await runDataset(settings, datasetSha256), Math.floor(group.g / B));
  const { taskIndex, task } = tasks[group.g % B] ?? {};
  if (task === undefined) throw new Error(`dataset group ${group.g} does not exist (batch size ${B}, ${tasks.length} tasks in its batch)`);
  const key = groupKey(group);
  const G = settings.datasetBuilder.groupSize;
  const keyPrefix = `${runKey(settings)}/train/${key}/`;
  const requests: RolloutRequest[] = Array.from({ length: G }, (_, member) => ({
    key: `${keyPrefix}${member}`,
    seedKey: `${settings.datasetBuilder.seed}/async/${key}/${member}`,
    group: 0,
    task,
    // `batch` is the policy step, for logs and the chaos tests' fault points.
    metadata: { agl_run: settings.runName, batch: group.policyStep, group: group.g, resample: group.r, member, task_index: taskIndex!, policy_step: group.policyStep },
  }));
  const collected = await runRolloutBatch(storeFor(settings), settings, 'train', group.resourcesId, keyPrefix, requests, 1, (m) => log.info(`${key}: ${m}`));
  const only = collected.groups[0]!;
  const result: GroupResult = { taskIndex: taskIndex!, rolloutIds: only.rolloutIds, statuses: only.statuses };
  // removeConstantRewardGroups filters a group when it finishes (as the cookbook's async loop does), so its slot is
  // freed at once and every step still trains groupsPerBatch groups.
  if (settings.removeConstantRewardGroups && only.statuses.includes('succeeded')) {
    const built = await buildTrajectoryGroups(storeFor(settings), settings, [only], Context.current().cancellationSignal);
    if (allSame(totalRewards(built.groups[0]!))) {
      log.info(`${key}: every rollout got the same reward: filtered, not trained`);
      result.constantReward = true;
    }
  }
  return result;
}
