// Trajectories -> Tinker datums (cookbook rl/data_processing.py: trajectory_to_data,
// assemble_training_data). Multi-turn episodes whose next prompt extends the previous
// prompt + reply are merged into one datum, so the shared prefix is trained once.
import type { Datum, DatumOrigin, Metrics, SequenceImage, Trajectory, TrajectoryGroup } from './types';

interface Accumulator {
  tokens: number[];
  logprobs: number[];
  advantages: number[];
  mask: number[];
  images: SequenceImage[];
}

function emptyAccumulator(): Accumulator {
  return { tokens: [], logprobs: [], advantages: [], mask: [], images: [] };
}

const sameImage = (a: SequenceImage, b: SequenceImage) => a.at === b.at && a.expected_tokens === b.expected_tokens && a.format === b.format && a.data === b.data;

/** The accumulated sequence is a prefix of the observation: its tokens, and its images at the same places. */
function isPrefix(acc: Accumulator, seq: readonly number[], images: readonly SequenceImage[]): boolean {
  const prefix = acc.tokens;
  if (prefix.length > seq.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== seq[i]) return false;
  const within = images.filter((im) => im.at < prefix.length);
  return within.length === acc.images.length && within.every((im, i) => sameImage(im, acc.images[i]!));
}

/** The one-token shift: position t predicts token t+1, so inputs drop the last token, targets the first. */
function toDatum(acc: Accumulator): Datum {
  const images = acc.images.filter((im) => im.at + im.expected_tokens <= acc.tokens.length - 1);
  return {
    ...(images.length ? { images } : {}),
    modelInput: acc.tokens.slice(0, -1),
    lossFnInputs: {
      target_tokens: acc.tokens.slice(1),
      logprobs: acc.logprobs.slice(1),
      advantages: acc.advantages.slice(1),
      mask: acc.mask.slice(1),
    },
  };
}

/**
 * One or more datums for a trajectory. Observation tokens get logprob 0, advantage 0, mask 0;
 * action tokens get their sampled logprob, `advantage` and mask 1.
 *
 * Differences from the cookbook, where it would crash or emit nonsense:
 * - a transition without logprobs is left out instead of raising; when the next prompt
 *   extends it, its tokens come back as plain context (mask 0), which is all we can do;
 * - a sequence of fewer than two tokens makes no datum (it has nothing to predict).
 */
export function trajectoryToData(traj: Trajectory, advantage: number): Datum[] {
  const data: Datum[] = [];
  let acc = emptyAccumulator();
  const flush = () => {
    if (acc.tokens.length >= 2) data.push(toDatum(acc));
    acc = emptyAccumulator();
  };

  for (const t of traj.transitions) {
    if (t.acLogprobs === null) continue;
    const obImages = t.obImages ?? [];
    let delta: readonly number[];
    if (acc.tokens.length === 0) delta = t.ob;
    else if (isPrefix(acc, t.ob, obImages)) delta = t.ob.slice(acc.tokens.length);
    else {
      flush();
      delta = t.ob;
    }
    // Images of the observation that the accumulated sequence does not have yet (same positions: it is a prefix).
    for (const im of obImages) if (im.at >= acc.tokens.length) acc.images.push(im);
    const n = t.acTokens.length;
    acc.tokens.push(...delta, ...t.acTokens);
    acc.logprobs.push(...delta.map(() => 0), ...t.acLogprobs);
    acc.advantages.push(...delta.map(() => 0), ...t.acTokens.map(() => advantage));
    acc.mask.push(...delta.map(() => 0), ...new Array<number>(n).fill(1));
  }
  flush();
  return data;
}

export interface TrainingData {
  data: Datum[];
  origins: DatumOrigin[];
  /** `train/dropped_missing_logprobs`: transitions left out for lack of logprobs (reference: crash). */
  metrics: Metrics;
}

/** All groups' trajectories in order, each with its advantage (advantages[group][traj]). */
export function assembleTrainingData(
  groups: readonly TrajectoryGroup[],
  advantages: readonly (readonly number[])[],
): TrainingData {
  if (groups.length !== advantages.length) {
    throw new Error(`assembleTrainingData: ${groups.length} groups but ${advantages.length} advantage lists`);
  }
  const data: Datum[] = [];
  const origins: DatumOrigin[] = [];
  let dropped = 0;
  groups.forEach((group, groupIdx) => {
    const groupAdv = advantages[groupIdx]!;
    if (group.trajectories.length !== groupAdv.length) {
      throw new Error(`assembleTrainingData: group ${groupIdx} has ${group.trajectories.length} trajectories but ${groupAdv.length} advantages`);
    }
    group.trajectories.forEach((traj, trajIdx) => {
      dropped += traj.transitions.filter((t) => t.acLogprobs === null).length;
      for (const d of trajectoryToData(traj, groupAdv[trajIdx]!)) {
        data.push(d);
        origins.push({ groupIdx, trajIdx });
      }
    });
  });
  return { data, origins, metrics: { 'train/dropped_missing_logprobs': dropped } };
}

/** The datum as forward_backward receives it: the cookbook keeps `mask` locally and strips it. */
export function removeMask(datum: Datum): Datum {
  const { target_tokens, logprobs, advantages } = datum.lossFnInputs;
  return { ...(datum.images ? { images: datum.images } : {}), modelInput: datum.modelInput, lossFnInputs: { target_tokens, logprobs, advantages } };
}

/** The unshifted sequence (model input + last target) that compute_logprobs scores for KL terms. */
export function fullSequence(datum: Datum): number[] {
  const targets = datum.lossFnInputs.target_tokens;
  return [...datum.modelInput, targets[targets.length - 1]!];
}

/** Action-token mask of a datum (1 where the policy acted). KL terms need it, so a stripped datum is an error. */
export function actionMask(datum: Datum): number[] {
  const mask = datum.lossFnInputs.mask;
  if (mask === undefined) throw new Error('datum has no mask (was removeMask applied too early?)');
  return mask;
}

/** A model input chunk as Tinker takes it: token ids, or an image at its positions. */
export type SequenceChunk =
  | { type: 'encoded_text'; tokens: number[] }
  | { type: 'image'; data: string; format: 'png' | 'jpeg'; expected_tokens: number };

/** A flat sequence with images as chunks: the text runs between the images, each image in its place. */
export function sequenceChunks(tokens: readonly number[], images: readonly SequenceImage[]): SequenceChunk[] {
  const out: SequenceChunk[] = [];
  let pos = 0;
  for (const im of [...images].sort((a, b) => a.at - b.at)) {
    if (im.at < pos || im.at + im.expected_tokens > tokens.length) throw new Error(`image at ${im.at} (${im.expected_tokens} positions) does not fit the sequence`);
    if (im.at > pos) out.push({ type: 'encoded_text', tokens: tokens.slice(pos, im.at) });
    out.push({ type: 'image', data: im.data, format: im.format, expected_tokens: im.expected_tokens });
    pos = im.at + im.expected_tokens;
  }
  if (pos < tokens.length) out.push({ type: 'encoded_text', tokens: tokens.slice(pos) });
  return out;
}
