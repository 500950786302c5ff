// Pure RL math for the training workflow's activities: no I/O, plain JSON data in and out.
export * from './types';
export { reconstructTransitions } from './transitions';
export type { ReconstructNotes, ReconstructResult } from './transitions';
export { computeAdvantages, totalRewards } from './advantages';
export { trajectoryToData, assembleTrainingData, removeMask, fullSequence, actionMask } from './datums';
export type { TrainingData } from './datums';
export { removeConstantRewardGroups, allSame } from './filter-groups';
export { discountedFutureSum, incorporateKlPenalty, computeKlSampleTrain, computePostKl } from './kl';
export type { KlPenaltyResult } from './kl';
export { splitList, splitIntoSubsteps } from './substeps';
export { dictMean, byGroupMetrics, trajectoryMetrics, computeTrajectoryMetrics, prefixMetrics } from './metrics';
export { aglGroupMetrics, makeTrajectoryGroup } from './groups';
export { prepareTrainingBatch } from './prepare-batch';
export type { PrepareOptions, PreparedBatch } from './prepare-batch';
export { oldestServedStep, servedStalenessMetrics } from './served-staleness';
export type { GroupProvenance } from './served-staleness';
