// Which policy a rollout-scoped call samples from, read from the store rather than from any proxy's memory: the
// rollout (GET /rollouts/{id}, the fetch the seed derivation makes anyway) names the resources it was enqueued
// under; those resources (GET /resources/{id}) carry the policy in `main_llm.agl_policy`, the very body the run
// posted to /admin/policy (activities/publish-policy.ts). So any proxy, restarted or not, serves a rollout the
// policy it was enqueued under. Resources without `agl_policy` (enqueued by Python users, older runs) or a rollout
// without resources: null, and the call uses the current policy as before.
import { fetchJson } from '../common/http';
import { ApiError } from './errors';
import { parsePolicySpec } from './policy-spec';
import type { PolicySpec } from './policy-spec';
import type { RolloutFacts } from './rollout-seed';
import { BoundedMap } from '../common/bounded-map';

/** The resource and field a run's policy travels in. */
export const POLICY_RESOURCE = 'main_llm';
export const POLICY_FIELD = 'agl_policy';

type Outcome = { spec: PolicySpec | null } | { invalid: string };

export class RolloutPolicies {
  /**
   * resources id -> the policy it names. Resources ids a run writes name one policy each (as switchIds do), so this
   * is only a cache; bounded, oldest dropped first.
   */
  private readonly byResources: BoundedMap<string, Promise<Outcome>>;

  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
    private readonly rollout: (rolloutId: string) => Promise<RolloutFacts>,
    maxCached = 1000,
  ) {
    this.byResources = new BoundedMap(maxCached);
  }

  /** The policy the rollout was enqueued under, or null (use the current one). Store trouble: ApiError 503. */
  async policyOf(rolloutId: string): Promise<PolicySpec | null> {
    let outcome: Outcome;
    try {
      const { resourcesId } = await this.rollout(rolloutId);
      if (resourcesId === null) return null;
      outcome = await this.resources(resourcesId);
    } catch (err) {
      throw new ApiError(503, `store: could not read the policy of rollout ${rolloutId}: ${(err as Error).message}`, 'api_error', null, 'store_unavailable');
    }
    if ('invalid' in outcome) throw new ApiError(422, outcome.invalid, 'invalid_request_error', null, 'invalid_rollout_policy');
    return outcome.spec;
  }

  private resources(resourcesId: string): Promise<Outcome> {
    const cached = this.byResources.get(resourcesId);
    if (cached) return cached;
    const fetched = fetchJson<{ resources?: Record<string, Record<string, unknown> | undefined> } | null>(
      `${this.base}/resources/${encodeURIComponent(resourcesId)}`,
      { method: 'GET', timeoutMs: this.timeoutMs, headers: this.headers },
    ).then((update): Outcome => {
      // Not kept when missing: resources written after the rollout was enqueued are found by the next call.
      if (!update) queueMicrotask(() => this.byResources.get(resourcesId) === fetched && this.byResources.delete(resourcesId));
      const body = update?.resources?.[POLICY_RESOURCE]?.[POLICY_FIELD];
      if (body === undefined || body === null) return { spec: null };
      try {
        return { spec: parsePolicySpec(body) };
      } catch (err) {
        return { invalid: `resources ${resourcesId}: ${POLICY_RESOURCE}.${POLICY_FIELD} is not a valid policy: ${(err as Error).message}` };
      }
    });
    fetched.catch(() => {
      if (this.byResources.get(resourcesId) === fetched) this.byResources.delete(resourcesId);
    });
    this.byResources.set(resourcesId, fetched);
    return fetched;
  }
}
