// Custom search attributes of a training run, so the Temporal UI and `temporal workflow list -q` can show and
// filter runs by batch, reward and model. The dev server registers them at start (dev/temporal-server.ts).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const RUN_NAME = defineSearchAttributeKey('AglRunName', SearchAttributeType.KEYWORD);
export const MODEL_NAME = defineSearchAttributeKey('AglModel', SearchAttributeType.KEYWORD);
export const PHASE = defineSearchAttributeKey('AglPhase', SearchAttributeType.KEYWORD);
export const BATCH = defineSearchAttributeKey('AglBatch', SearchAttributeType.INT);
export const TRAIN_REWARD = defineSearchAttributeKey('AglTrainReward', SearchAttributeType.DOUBLE);
export const EVAL_REWARD = defineSearchAttributeKey('AglEvalReward', SearchAttributeType.DOUBLE);

/** A fork's lineage: the parent's records key (`<runName>@<instance>`) and the step it started from. */
export const PARENT_RUN = defineSearchAttributeKey('AglParentRun', SearchAttributeType.KEYWORD);
export const FORK_STEP = defineSearchAttributeKey('AglForkStep', SearchAttributeType.INT);

/** The sweep a run is a child of (its name), set on the sweep's workflow too. */
export const SWEEP = defineSearchAttributeKey('AglSweep', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [RUN_NAME, MODEL_NAME, PHASE, BATCH, TRAIN_REWARD, EVAL_REWARD, PARENT_RUN, FORK_STEP, SWEEP];
