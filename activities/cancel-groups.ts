import { log } from '@temporalio/activity';
import { TERMINAL_ROLLOUT_STATUSES } from '../store/types';
import type { RunSettings } from '../shared/run-types';
import { rolloutsByKeyPrefix } from './batch-ref';
import { runKey } from './rollout-batch';
import { storeFor } from './services';

/**
 * Async runs, on stop: the rollouts of groups no longer wanted (`keys`, e.g. g12r0) that are still queued or
 * running are cancelled in the store, so no runner takes them and the run leaves nothing behind. Idempotent: a
 * retry finds them cancelled. Returns how many it cancelled.
 */
export async function cancelGroups(settings: RunSettings, keys: string[]): Promise<number> {
  const store = storeFor(settings);
  let cancelled = 0;
  for (const key of keys) {
    const rollouts = await rolloutsByKeyPrefix(store, `${runKey(settings)}/train/${key}/`);
    for (const r of rollouts.values()) {
      if (TERMINAL_ROLLOUT_STATUSES.includes(r.status)) continue;
      await store.updateRollout(r.rollout_id, { status: 'cancelled' }, { timeoutMs: 30_000 });
      cancelled++;
    }
  }
  if (cancelled > 0) log.info(`cancelled ${cancelled} rollouts of ${keys.length} groups no longer wanted`);
  return cancelled;
}
