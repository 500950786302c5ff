// The pure half of the cookbook's prepare_minibatch: metrics, advantages, datums. The KL
// penalty (which needs reference logprobs from the trainer) is applied afterwards by the caller.
// Where the reference would crash on this batch, the result says to skip the step instead.
import { computeAdvantages } from './advantages';
import { assembleTrainingData } from './datums';
import { removeConstantRewardGroups } from './filterGroups';
import { computeTrajectoryMetrics } from './metrics';
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
  const training = assembleTrainingData(kept, computeAdvantages(kept));
  Object.assign(metrics, training.metrics);
  if (training.data.length === 0) {
    // Every rollout empty (e.g. no token ids recorded) or every transition without logprobs:
    // the cookbook's split_list / compute_kl_sample_train would raise here.
    metrics['train/skipped_empty_batch'] = 1;
    const reason =
      training.metrics['train/dropped_missing_logprobs']! > 0
        ? 'no trainable transitions: every transition lacks logprobs'
        : 'no trainable transitions: every trajectory is empty';
    return { skip: true, reason, metrics };
  }
  metrics['train/skipped_empty_batch'] = 0;
  return { skip: false, data: training.data, origins: training.origins, metrics };
}
