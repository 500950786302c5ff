// Staleness of an async run's trained groups as the proxy served them, read from the store, not from the run's own
// metrics or labels: each step record (in the store's run records) names the groups its step trained; each group's rollouts are found by their
// idempotency keys (<run>@<instance>/train/<group>/<member>), and the oldest `agl.policy.step` among their spans is
// the policy that served the group. Step record N (the policy after N steps) trained at policy step N - 1.
import { POLICY_STEP_ATTRIBUTE, PROXY_SPAN_NAME } from '../../proxy/span';
import { StoreClient } from '../../store/client';
import { stepRecordsOf } from './run-records';

export interface ServedGroup {
  step: number;
  key: string;
  /** The oldest policy step that served any of its calls; null when no span said. */
  served: number | null;
  staleness: number | null;
}

/** Every trained group of the run named `runName` with the policy that served it (store at `storeUrl`). */
export async function servedGroupsOf(storeUrl: string, runName: string): Promise<ServedGroup[]> {
  const store = new StoreClient(storeUrl);
  const records = await stepRecordsOf(storeUrl, runName);
  // Every rollout of the run by idempotency key (all its instances: a run name is used once per test).
  const byKey = new Map<string, { id: string }>();
  for (let offset = 0; ; offset += 1000) {
    const page = await store.queryRollouts({ idempotency_key_prefix: `${runName}@`, limit: 1000, offset }, { timeoutMs: 30_000 });
    for (const r of page.items) {
      const key = r.metadata?.idempotency_key;
      if (typeof key === 'string') byKey.set(key, { id: r.rollout_id });
    }
    if (page.items.length < 1000) break;
  }
  const out: ServedGroup[] = [];
  for (const record of records) {
    const step = record.result.state.step - 1;
    for (const key of record.groups ?? []) {
      const members = [...byKey.entries()].filter(([k]) => k.includes(`/train/${key}/`)).map(([, v]) => v.id);
      let served: number | null = null;
      for (const id of members) {
        const spans = (await store.querySpans(id, 'latest', {}, { timeoutMs: 30_000 })).items as unknown as { name: string; attributes?: Record<string, unknown>; status?: { status_code?: string } }[];
        for (const s of spans) {
          const p = s.attributes?.[POLICY_STEP_ATTRIBUTE];
          if (s.name === PROXY_SPAN_NAME && s.status?.status_code !== 'ERROR' && typeof p === 'number' && (served === null || p < served)) served = p;
        }
      }
      out.push({ step, key, served, staleness: served === null ? null : step - served });
    }
  }
  return out;
}

/** What is wrong with the served staleness of `groups` under bound `k` (empty when every group is within it). */
export function servedStalenessViolations(groups: ServedGroup[], k: number): string[] {
  return groups.flatMap((g) =>
    g.served === null
      ? [`step ${g.step} trained ${g.key}, whose spans name no serving policy`]
      : g.staleness! > k
        ? [`step ${g.step} trained ${g.key} served by policy ${g.served}: staleness ${g.staleness} above ${k}`]
        : [],
  );
}
