// A batch's rollouts found in the store by their idempotency-key prefix (BatchRef), instead of carried as lists
// through Temporal history: the prefix names one batch of one run (`<run>@<instance>/train/<batch>/`, the slash
// keeps batch 1 from matching batch 10), and each rollout's key ends in `<group>/<member>`.
import type { StoreClient } from '../store/client';
import type { AttemptedRollout, Rollout } from '../store/types';
import type { BatchRef, CollectedBatch, CollectedGroup } from '../shared/run-types';

const PAGE = 1000;

/** Every rollout whose idempotency key starts with `keyPrefix`, by key (paged, so any batch size fits). */
export async function rolloutsByKeyPrefix(store: StoreClient, keyPrefix: string, signal?: AbortSignal): Promise<Map<string, Rollout | AttemptedRollout>> {
  const byKey = new Map<string, Rollout | AttemptedRollout>();
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.queryRollouts({ idempotency_key_prefix: keyPrefix, limit: PAGE, offset }, { timeoutMs: 60_000, signal });
    for (const r of page.items) {
      const key = r.metadata?.idempotency_key;
      if (typeof key === 'string') byKey.set(key, r);
    }
    if (page.items.length < PAGE) return byKey;
  }
}

/** The batch's groups in task order, each with its members in order: inline, or read from the store by `ref`. */
export async function groupsOf(store: StoreClient, collected: CollectedBatch, signal?: AbortSignal): Promise<CollectedGroup[]> {
  if (collected.groups) return collected.groups;
  if (!collected.ref) throw new Error('a collected batch names neither its groups nor where they are');
  return groupsByRef(store, collected.ref, signal);
}

async function groupsByRef(store: StoreClient, ref: BatchRef, signal?: AbortSignal): Promise<CollectedGroup[]> {
  const byKey = await rolloutsByKeyPrefix(store, ref.keyPrefix, signal);
  const groups: CollectedGroup[] = [];
  for (let g = 0; g < ref.numGroups; g++) {
    const group: CollectedGroup = { taskIndex: -1, rolloutIds: [], statuses: [] };
    for (let m = 0; m < ref.groupSize; m++) {
      const r = byKey.get(`${ref.keyPrefix}${g}/${m}`);
      // The collection that made the reference waited for every one of them: a gap is a store that lost data.
      if (!r) throw new Error(`rollout ${ref.keyPrefix}${g}/${m} is not in the store (${byKey.size} of ${ref.numGroups * ref.groupSize} found)`);
      group.taskIndex = Number(r.metadata?.task_index ?? -1);
      group.rolloutIds.push(r.rollout_id);
      group.statuses.push(r.status);
    }
    groups.push(group);
  }
  return groups;
}
