import { fetchJson } from '../common/http';
import type { PolicyState, RunSettings } from '../workflows/run-types';
import { withHeartbeats } from './keep-alive';
import { runKey } from './rollout-batch';
import { proxyUrlFor, storeFor } from './services';

/**
 * The seed's "proxy restart": point the proxy at the policy's sampler with this phase's sampling defaults
 * (the eval temperature for evaluation), then record the resources rollouts of this phase will carry.
 * Both calls are idempotent: the proxy treats a repeated switchId as one switch, and the resources id is fixed.
 */
export async function publishPolicy(settings: RunSettings, batch: number, purpose: 'train' | 'eval', policy: PolicyState): Promise<string> {
  const proxyUrl = proxyUrlFor(settings);
  const token = process.env.AGL_PROXY_ADMIN_TOKEN;
  // Heartbeats while the proxy drains and loads the sampler, so a short heartbeat timeout does not cut it off.
  await withHeartbeats('switching the proxy', fetchJson(`${proxyUrl}/admin/policy`, {
    method: 'POST',
    timeoutMs: 120_000, // the switch drains in-flight calls first
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: {
      switchId: `${runKey(settings)}/${batch}/${purpose}/${policy.step}`,
      modelName: settings.modelName,
      samplerPath: policy.samplerPath,
      baseModel: settings.modelName,
      renderer: settings.rendererName,
      retryAttempts: settings.llmProxyRetryAttempts,
      sampling: {
        temperature: purpose === 'eval' ? settings.evalTemperature : settings.trainTemperature,
        topK: settings.topK,
        topP: settings.topP,
        maxTokens: settings.maxTokens,
      },
    },
  }));
  // Goes into URL paths (GET /resources/{id}) that Python clients do not escape: letters, digits and '-' only.
  const resourcesId = `${runKey(settings)}-b${batch}-${purpose}`.replace(/[^A-Za-z0-9._-]/g, '-');
  await storeFor(settings).updateResources(
    resourcesId,
    { main_llm: { resource_type: 'proxy_llm', endpoint: proxyUrl, model: settings.modelName, api_key: null, sampling_parameters: {} } },
    { timeoutMs: 30_000 },
  );
  return resourcesId;
}
