import { fetchJson } from '../common/http';
import type { JsonObject } from '../store/types';
import type { PolicyState, RunSettings } from '../shared/run-types';
import { withHeartbeats } from './keep-alive';
import { runKey } from './rollout-batch';
import { proxyUrlFor, storeFor } from './services';

/**
 * The seed's "proxy restart": point the proxy at the policy's sampler with this phase's sampling defaults
 * (the eval temperature for evaluation), then record the resources rollouts of this phase will carry.
 * The resources carry the policy itself (`main_llm.agl_policy`, the body posted to /admin/policy), so every turn
 * of a rollout samples from the policy it was enqueued under, on any proxy (proxy/rollout-policy.ts); Python
 * runners ignore the extra field. Synchronous runs switch with drain (in-flight calls finish first); async runs
 * (`settings.async`) with `drain: false`, so rollouts in flight are neither held nor cut.
 * Both calls are idempotent: the proxy treats a repeated switchId as one switch, and the resources id is fixed.
 */
export async function publishPolicy(settings: RunSettings, batch: number, purpose: 'train' | 'eval', policy: PolicyState): Promise<string> {
  const proxyUrl = proxyUrlFor(settings);
  const token = process.env.AGL_PROXY_ADMIN_TOKEN;
  const spec: JsonObject = {
    switchId: `${runKey(settings)}/${batch}/${purpose}/${policy.step}`,
    modelName: settings.modelName,
    samplerPath: policy.samplerPath,
    baseModel: settings.modelName,
    renderer: settings.rendererName,
    retryAttempts: settings.llmProxyRetryAttempts,
    // Recorded in every span this policy serves: the train step reads each group's staleness from it.
    policyStep: policy.step,
    sampling: {
      temperature: purpose === 'eval' ? settings.evalTemperature : settings.trainTemperature,
      topK: settings.topK,
      topP: settings.topP,
      maxTokens: settings.maxTokens,
    },
  };
  // Until RunSettings declares it: `async` absent or null is the synchronous loop.
  const asyncRun = ((settings as { async?: unknown }).async ?? null) !== null;
  // Heartbeats while the proxy drains and loads the sampler, so a short heartbeat timeout does not cut it off.
  await withHeartbeats('switching the proxy', fetchJson(`${proxyUrl}/admin/policy`, {
    method: 'POST',
    timeoutMs: 120_000, // the switch drains in-flight calls first
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: asyncRun ? { ...spec, drain: false } : spec,
  }));
  // Goes into URL paths (GET /resources/{id}) that Python clients do not escape: letters, digits and '-' only.
  const resourcesId = `${runKey(settings)}-b${batch}-${purpose}`.replace(/[^A-Za-z0-9._-]/g, '-');
  await storeFor(settings).updateResources(
    resourcesId,
    { main_llm: { resource_type: 'proxy_llm', endpoint: proxyUrl, model: settings.modelName, api_key: null, sampling_parameters: {}, agl_policy: spec } },
    { timeoutMs: 30_000 },
  );
  return resourcesId;
}
