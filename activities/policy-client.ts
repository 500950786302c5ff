// The trained model on the trainer, as activities see it: stateless across processes, cached within one.
// A worker that already holds the model at exactly the wanted state uses it as is; anything else (a new
// process, a retry after a crash mid-step, a restarted trainer) gets a fresh model loaded from the saved state,
// weights and optimizer, so a step is never applied on top of a half-applied one.
import { log } from '@temporalio/activity';
import type { TrainingClient } from '../tinker';
import type { PolicyState, RunSettings } from '../shared/run-types';
import { tinkerFor } from './services';

interface Held {
  client: TrainingClient;
  /** The statePath the model currently holds exactly; null while a step is in flight or after a failure. */
  at: string | null;
}

const held = new Map<string, Held>();

/** A training client whose model holds exactly `policy.statePath` (weights and optimizer state). */
export async function trainingClientAt(settings: RunSettings, policy: PolicyState): Promise<TrainingClient> {
  const h = held.get(settings.runName);
  if (h && h.at === policy.statePath) return h.client;
  // The model it replaces is freed first: an engine holds a few LoRA adapters at a time (SkyRL's max_lora_adapters),
  // and a run that reloads after every failed step would fill them. Best effort: a model the engine lost is gone anyway.
  if (h) {
    await h.client.unload({ timeoutMs: 30_000 }).catch((err: Error) => {
      log.warn('the replaced model could not be unloaded; the engine may hold its adapter until the session expires', { run: settings.runName, error: err.message });
    });
  }
  const client = await tinkerFor(settings).createTrainingClientFromState(policy.statePath, { withOptimizer: true });
  held.set(settings.runName, { client, at: policy.statePath });
  return client;
}

/** Marks the held model as changing: until `markAt`, nobody may trust its state. */
export function markDirty(runName: string): void {
  const h = held.get(runName);
  if (h) h.at = null;
}

export function markAt(runName: string, client: TrainingClient, statePath: string): void {
  held.set(runName, { client, at: statePath });
}

/** Forgets a cached model (tests use this to force the crash-recovery path). */
export function forgetPolicyClients(): void {
  held.clear();
}

const locks = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` alone among this process's activities of the same run. Temporal can start a second attempt of an
 * activity while the first is still running here (the server timed it out while it was unreachable, say); two
 * train steps on the one held model would mix their gradients. The second waits, then finds the first one's
 * commit record, or a model marked dirty.
 */
export async function exclusivelyFor<T>(runName: string, fn: () => Promise<T>): Promise<T> {
  const before = locks.get(runName) ?? Promise.resolve();
  const mine = before.catch(() => undefined).then(fn);
  locks.set(runName, mine);
  try {
    return await mine;
  } finally {
    if (locks.get(runName) === mine) locks.delete(runName);
  }
}
