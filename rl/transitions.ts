// Triplets -> one Trajectory, as reconstruct_transitions in Agent-lightning's
// examples/tinker/agl_tinker/rollout.py. The agent owns the environment, so the
// transitions are rebuilt from what the adapter found in the rollout's spans.
import type { Triplet } from './adapters/types';
import type { Metrics, SequenceImage, Trajectory, Transition } from './types';

/** What reconstruction had to leave out; the reference only logs these. */
export interface ReconstructNotes {
  /** Triplets without a `token_ids` key on prompt or response (reference: error log, skip). */
  skippedNoTokenIds: number;
  /** Triplets with an empty prompt or response token list (reference: warning, skip). */
  skippedEmptyTokenIds: number;
  /** Kept transitions whose response had no `logprobs` (acLogprobs = null). */
  missingLogprobs: number;
  /** Kept transitions whose logprob count differed from the token count (acLogprobs = null). */
  logprobCountMismatch: number;
}

export interface ReconstructResult {
  trajectory: Trajectory;
  notes: ReconstructNotes;
}

function isTokenList(x: unknown): x is number[] {
  return Array.isArray(x);
}

/** A prompt's images as the proxy recorded them, each inside the prompt; anything else is an error naming it. */
function imagesOf(x: unknown, promptLength: number): SequenceImage[] | undefined {
  if (x === undefined || x === null) return undefined;
  if (!Array.isArray(x)) throw new Error('triplet prompt.images must be a list');
  return x.map((im, i) => {
    const ok =
      im && typeof im === 'object' && Number.isInteger(im.at) && Number.isInteger(im.expected_tokens) && im.expected_tokens > 0 &&
      typeof im.data === 'string' && (im.format === 'png' || im.format === 'jpeg') && im.at >= 0 && im.at + im.expected_tokens <= promptLength;
    if (!ok) throw new Error(`triplet prompt.images[${i}] is not an image inside the prompt ({at, data, format, expected_tokens})`);
    return { at: im.at, data: im.data, format: im.format, expected_tokens: im.expected_tokens };
  });
}

export function reconstructTransitions(triplets: readonly Triplet[]): ReconstructResult {
  const notes: ReconstructNotes = {
    skippedNoTokenIds: 0,
    skippedEmptyTokenIds: 0,
    missingLogprobs: 0,
    logprobCountMismatch: 0,
  };
  const transitions: Transition[] = [];
  const last = triplets.length - 1;

  triplets.forEach((triplet, index) => {
    const promptIds = triplet.prompt?.token_ids;
    const responseIds = triplet.response?.token_ids;
    if (promptIds === undefined || responseIds === undefined) {
      notes.skippedNoTokenIds += 1;
      return;
    }
    if (!isTokenList(promptIds) || !isTokenList(responseIds) || promptIds.length === 0 || responseIds.length === 0) {
      notes.skippedEmptyTokenIds += 1;
      return;
    }

    let acLogprobs: number[] | null = null;
    const raw = triplet.response.logprobs;
    if (!Array.isArray(raw)) {
      notes.missingLogprobs += 1;
    } else {
      const values = raw.map((p) => p.logprob);
      if (values.length !== responseIds.length) notes.logprobCountMismatch += 1;
      else acLogprobs = values;
    }

    // "Last" refers to the adapter's last triplet, not the last kept one: if that one is
    // skipped, no transition is marked done and no reward/final_step is reported (as the reference).
    const isLast = index === last;
    const metrics: Metrics = {};
    if (triplet.reward !== null && triplet.reward !== undefined && isLast) {
      metrics['reward/final_step'] = triplet.reward;
    }
    metrics['reward/not_null'] = triplet.reward !== null && triplet.reward !== undefined ? 1.0 : 0.0;

    let obImages: SequenceImage[] | undefined;
    try {
      obImages = imagesOf(triplet.prompt.images, promptIds.length);
    } catch {
      // The prompt's ids mean nothing without their images: as a triplet without usable token ids.
      notes.skippedNoTokenIds += 1;
      return;
    }
    transitions.push({
      ...(obImages ? { obImages } : {}),
      ob: [...promptIds],
      acTokens: [...responseIds],
      acLogprobs,
      reward: triplet.reward ?? 0.0,
      episodeDone: isLast,
      metrics,
    });
  });

  return { trajectory: { transitions, finalOb: [] }, notes };
}
