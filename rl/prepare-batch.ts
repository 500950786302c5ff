// The pure half of the cookbook's prepare_minibatch: metrics, advantages, datums. The KL
// penalty (which needs reference logprobs from the trainer) is applied afterwards by the caller.
// Where the reference would crash on this batch, the result says to skip the step instead.
import { computeAdvantages } from './advantages';
import { assembleTrainingData } from './datums';
import { removeConstantRewardGroups } from './filter-groups';
import { computeTrajectoryMetrics } from './metrics';
import { groupsWithUnsendableAdvantages } from './sendable';
import type { Datum, DatumOrigin, Metrics, TrajectoryGroup } from './types';

export interface PrepareOptions {
  /** Config.removeConstantRewardGroups (train batches only). */
  removeConstantRewardGroups?: boolean;
  /** logging_tags() per group; Agent-lightning tasks have none. */
  tagsPerGroup?: readonly (readonly string[])[];
}

export type PreparedBatch =
  | { skip: false; data: Datum[]; origins: DatumOrigin[]; metrics: Metrics }
  | { skip: true; reason: string; metrics: Metrics };

export function prepareTrainingBatch(groups: readonly TrajectoryGroup[], options: PrepareOptions = {}): PreparedBatch {
  const kept = options.removeConstantRewardGroups ? removeConstantRewardGroups(groups) : [...groups];
  const metrics: Metrics = computeTrajectoryMetrics(kept, options.tagsPerGroup ?? []);
  // A group whose advantages would become ±Infinity on the float32 wire (a reward near 1e308) is left out: the
  // trainer would refuse the whole batch for it.
  const advantages = computeAdvantages(kept);
  const unsendable = groupsWithUnsendableAdvantages(advantages);
  const sendable = kept.filter((_, i) => !unsendable.has(i));
  const training = assembleTrainingData(sendable, advantages.filter((_, i) => !unsendable.has(i)));
  Object.assign(metrics, training.metrics);
  metrics['train/dropped_groups_unsendable_advantages'] = unsendable.size;
  if (training.data.length === 0) {
    // Every rollout empty (e.g. no token ids recorded) or every transition without logprobs:
    // the cookbook's split_list / compute_kl_sample_train would raise here.
    metrics['train/skipped_empty_batch'] = 1;
    const reason =
      sendable.length === 0 && unsendable.size > 0
        ? 'no trainable transitions: every group has advantages beyond float32 (a reward too large)'
        : training.metrics['train/dropped_missing_logprobs']! > 0
          ? 'no trainable transitions: every transition lacks logprobs'
          : 'no trainable transitions: every trajectory is empty';
    return { skip: true, reason, metrics };
  }
  metrics['train/skipped_empty_batch'] = 0;
  // Origins name groups by their place in the batch, dropped ones included.
  const keptIndex = kept.map((_, i) => i).filter((i) => !unsendable.has(i));
  const origins = training.origins.map((o) => ({ ...o, groupIdx: keptIndex[o.groupIdx]! }));
  return { skip: false, data: training.data, origins, metrics };
}
