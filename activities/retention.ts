// Retention of a long run's rollouts in the store: those of batches more than `retainSteps` steps back (trained
// long ago) go, with their attempts and spans; "all" keeps everything. Runs from before the setting keep all.
import type { RunSettings } from '../shared/run-types';
import { runKey } from './rollout-batch';
import { storeFor } from './services';

/** The first batch whose rollouts the store keeps after step `step`, or null when it keeps them all. */
export function keptFrom(retainSteps: RunSettings['retainSteps'] | undefined, step: number): number | null {
  if (retainSteps === undefined || retainSteps === 'all') return null;
  const from = step + 1 - retainSteps;
  return from > 0 ? from : null;
}

export async function pruneOldRollouts(settings: RunSettings, step: number): Promise<void> {
  const from = keptFrom(settings.retainSteps, step);
  if (from === null) return;
  await storeFor(settings).pruneRun(runKey(settings), from, { timeoutMs: 60_000 });
}
