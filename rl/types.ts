// Plain-data versions of the Tinker Cookbook's RL types (tinker_cookbook/rl/types.py).
// Everything here is JSON-able so it can cross activity boundaries; token observations
// are flat int arrays because the agents we train are text-only.

/** Scalar metrics, as the cookbook's `dict[str, float | int]`. */
export type Metrics = Record<string, number>;

/**
 * An image inside a token sequence (a vision model's prompt): it takes positions [at, at + expected_tokens), which
 * hold placeholder ids in the flat sequence; the Tinker datum carries the image itself there (an image chunk).
 */
export interface SequenceImage {
  at: number;
  /** The image's bytes, base64. */
  data: string;
  format: 'png' | 'jpeg';
  expected_tokens: number;
}

/** One LLM call of an episode: the full prompt seen before acting and the sampled reply. */
export interface Transition {
  /** Observation: every prompt token the model saw for this call. */
  ob: number[];
  /** The images of the observation, at their positions in `ob`. */
  obImages?: SequenceImage[];
  /** Sampled action tokens. */
  acTokens: number[];
  /** Sampling logprob per action token; null when the span did not carry usable logprobs. */
  acLogprobs: number[] | null;
  /** Per-step reward (0 when the adapter matched none). */
  reward: number;
  episodeDone: boolean;
  metrics: Metrics;
}

export interface Trajectory {
  transitions: Transition[];
  /** Unused by training (the cookbook ignores it); always [] for Agent-lightning rollouts. */
  finalOb: number[];
}

/** Rollouts of one task. `metrics` may hold more entries than trajectories (AGL appends one group dict). */
export interface TrajectoryGroup {
  trajectories: Trajectory[];
  /** Group-level rewards added to each trajectory's return (0 for Agent-lightning tasks). */
  finalRewards: number[];
  metrics: Metrics[];
}

/** Loss inputs by Tinker wire name. `mask` is ours to keep; `removeMask` strips it before forward_backward. */
export interface LossFnInputs {
  target_tokens: number[];
  logprobs: number[];
  advantages: number[];
  mask?: number[];
}

export interface Datum {
  modelInput: number[];
  lossFnInputs: LossFnInputs;
  /** The images of the model input, at their positions in `modelInput` (sent as image chunks). */
  images?: SequenceImage[];
}

/** Where a datum came from, as the cookbook's metadata_D. */
export interface DatumOrigin {
  groupIdx: number;
  trajIdx: number;
}

/** Rollout statuses the store reports (Agent-lightning RolloutStatus). */
export type RolloutStatus =
  | 'queuing'
  | 'preparing'
  | 'running'
  | 'failed'
  | 'succeeded'
  | 'cancelled'
  | 'requeuing';
