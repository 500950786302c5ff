import { log } from '@temporalio/activity';
import { fetchJson, HttpError } from '../common/http';
import { policyResourcesId } from '../common/policy-resources-id';
import type { JsonObject } from '../store/types';
import type { PolicyState, RunSettings } from '../shared/run-types';
import { withHeartbeats } from './keep-alive';
import { runKey } from './rollout-batch';
import { proxyUrlFor, publishTargetsFor, storeFor } from './services';

/**
 * The seed's "proxy restart": point the proxy at the policy's sampler with this phase's sampling defaults
 * (the eval temperature for evaluation), then record the resources rollouts of this phase will carry.
 * The resources carry the policy itself (`main_llm.agl_policy`, the body posted to /admin/policy), so every turn
 * of a rollout samples from the policy it was enqueued under, on any proxy (proxy/rollout-policy.ts); Python
 * runners ignore the extra field. Synchronous runs switch with drain (in-flight calls finish first); async runs
 * (`settings.async`) with `drain: false`, so rollouts in flight are neither held nor cut.
 * Both calls are idempotent: the proxy treats a repeated switchId as one switch, and the resources id is fixed.
 * With several proxies (`proxyUrls`), the policy is posted to each; see postToProxies for why a dead one is skipped.
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
  const body = asyncRun ? { ...spec, drain: false } : spec;
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  // Heartbeats while the proxies drain and load the sampler, so a short heartbeat timeout does not cut it off.
  await withHeartbeats('switching the proxies', postToProxies(publishTargetsFor(settings), body, headers));
  const resourcesId = policyResourcesId(runKey(settings), batch, purpose);
  await storeFor(settings).updateResources(
    resourcesId,
    { main_llm: { resource_type: 'proxy_llm', endpoint: proxyUrl, model: settings.modelName, api_key: null, sampling_parameters: {}, agl_policy: spec } },
    { timeoutMs: 30_000 },
  );
  return resourcesId;
}

/**
 * Posts the policy to every proxy at once. Rollouts do not need it (each proxy reads a rollout's policy from the
 * store); the post makes the policy current for calls that name no rollout, and warms the sampler. So a proxy that
 * does not answer (refused, unreachable, 5xx, past its deadline) is skipped with a warning, as long as one took the
 * policy; one that answers 4xx refused the policy itself, which fails the step, as does no proxy taking it.
 */
async function postToProxies(urls: string[], body: JsonObject, headers: Record<string, string>): Promise<void> {
  const outcomes = await Promise.allSettled(
    urls.map(async (url) => {
      // A short look first, so a proxy host that is cut off costs 3 s, not the switch's long deadline.
      await fetchJson(`${url}/health`, { timeoutMs: 3000 });
      // The switch drains in-flight calls first: a long deadline.
      await fetchJson(`${url}/admin/policy`, { method: 'POST', timeoutMs: 120_000, headers, body });
    }),
  );
  const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [{ url: urls[i]!, err: o.reason as Error }] : []));
  const refused = failed.find((f) => f.err instanceof HttpError && f.err.status >= 400 && f.err.status < 500);
  if (refused) throw refused.err;
  if (failed.length === urls.length) throw failed[0]!.err;
  for (const f of failed) log.warn(`publishPolicy: proxy ${f.url} skipped: ${f.err.message.split('\n')[0]}`);
}
