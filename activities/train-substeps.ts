// The cookbook's train_step (rl/train.py, 0.6.1): each substep's forward_backward and optim_step are submitted
// together, and the next substep's before the current results are read, so they land on the same clock cycle of
// the service. Returns the learner's logprobs per datum, the forward_backward metrics and the last optim_step's.
import type { Datum as WireDatum, ForwardBackwardResult, LossFn, TrainingClient } from '../tinker';

export interface SubstepOptions {
  lossFn: LossFn;
  lossFnConfig?: Record<string, number>;
  adam: { learningRate: number; beta1: number; beta2: number; eps: number };
  /** Wraps each wait (the activity heartbeats while it waits). */
  waitFor: <T>(what: string, p: Promise<T>) => Promise<T>;
  /** Runs after a substep's forward_backward result is in, before its optim_step result is read. */
  afterForwardBackward?: () => void;
  /**
   * Runs synchronously right after the last substep's forward_backward and optim_step are submitted, before any
   * result is read: calls it makes on `tc` take the next seq_ids, so the service runs them after that optim_step,
   * in the same pass where it can (trainStep's saves).
   */
  afterLastSubmit?: () => void;
}

export interface SubstepResults {
  trainingLogprobs: number[][];
  forwardBackwardMetrics: Record<string, number>;
  optimMetrics: Record<string, number>;
}

export async function trainSubsteps(tc: TrainingClient, substeps: WireDatum[][], o: SubstepOptions): Promise<SubstepResults> {
  const out: SubstepResults = { trainingLogprobs: [], forwardBackwardMetrics: {}, optimMetrics: {} };
  if (substeps.length === 0) return out;
  const last = substeps.length - 1;
  const submitAt = (i: number) => {
    const s = submit(tc, substeps[i], o);
    if (i === last) o.afterLastSubmit?.();
    return s;
  };
  let current = submitAt(0);
  for (let i = 0; i < substeps.length; i++) {
    const next = i + 1 < substeps.length ? submitAt(i + 1) : undefined;
    const fb = await o.waitFor('forward_backward', current.fb);
    for (const r of fb.lossFnOutputs) out.trainingLogprobs.push(r.logprobs ?? []);
    Object.assign(out.forwardBackwardMetrics, fb.metrics);
    o.afterForwardBackward?.();
    out.optimMetrics = await o.waitFor('optim_step', current.optim);
    if (next) current = next;
  }
  return out;
}

/**
 * One substep's forward_backward and optim_step, back to back (seq_ids n, n+1). Both promises are marked handled
 * at once: when the first fails the caller fails before awaiting the second, which must not crash the process.
 */
function submit(tc: TrainingClient, data: WireDatum[], o: SubstepOptions) {
  const fb: Promise<ForwardBackwardResult> = tc.forwardBackward(data, o.lossFn, o.lossFnConfig);
  const optim = tc.optimStep(o.adam);
  fb.catch(() => undefined);
  optim.catch(() => undefined);
  return { fb, optim };
}
