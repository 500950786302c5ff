// Which LLM an agent talks to, from a rollout's resources (§2.3 ProxyLLM semantics): the `main_llm` resource
// (else the first LLM-like one); a proxy_llm endpoint is scoped to the rollout and attempt so the proxy can
// record its spans under them: http://h:p → http://h:p/rollout/{rid}/attempt/{aid}, http://h:p/v1 → …/{aid}/v1.
import type { LlmResource, NamedResources } from './types';

export interface AgentLlm {
  endpoint: string;
  model: string;
  apiKey: string | null;
  samplingParameters: Record<string, unknown>;
}

export function scopedProxyEndpoint(endpoint: string, rolloutId: string, attemptId: string): string {
  let base = endpoint.endsWith('/') ? endpoint.slice(0, -1) : endpoint;
  const hasV1 = base.endsWith('/v1');
  if (hasV1) base = base.slice(0, -3);
  return `${base}/rollout/${rolloutId}/attempt/${attemptId}${hasV1 ? '/v1' : ''}`;
}

/** `proxyUrl` replaces a proxy_llm's endpoint (a runner told which proxies to use); any proxy serves any rollout. */
/** The resource's endpoint on another proxy: its origin replaced, its path (`/v1` or none) kept. */
function withProxy(endpoint: string, proxyUrl: string | undefined): string {
  if (!proxyUrl) return endpoint;
  const path = new URL(endpoint).pathname.replace(/\/+$/, '');
  return `${proxyUrl.replace(/\/+$/, '')}${path}`;
}

export function pickLlm(resources: NamedResources, rolloutId: string, attemptId: string, proxyUrl?: string): AgentLlm | null {
  const isLlm = (r: unknown): r is LlmResource =>
    !!r && typeof r === 'object' && ((r as LlmResource).resource_type === 'llm' || (r as LlmResource).resource_type === 'proxy_llm');
  const chosen = isLlm(resources['main_llm']) ? resources['main_llm'] : Object.values(resources).find(isLlm);
  if (!chosen) return null;
  return {
    endpoint: chosen.resource_type === 'proxy_llm' ? scopedProxyEndpoint(withProxy(chosen.endpoint, proxyUrl), rolloutId, attemptId) : chosen.endpoint,
    model: chosen.model,
    apiKey: chosen.api_key ?? null,
    samplingParameters: (chosen.sampling_parameters ?? {}) as Record<string, unknown>,
  };
}
