// Client of the proxy's admin endpoint, for tools and tests: switch the current policy (idempotent per switchId;
// `drain: false` swaps at once) and read it, with the registry of the other policies rollouts still use.
import { fetchJson } from '../common/http';
import type { PolicySpec, SamplingDefaults } from './policy-spec';

export interface SwitchRequest {
  switchId: string;
  modelName: string;
  samplerPath?: string;
  baseModel?: string;
  renderer?: string;
  sampling?: Partial<SamplingDefaults>;
  retryAttempts?: number;
  /** Default true: hold and drain calls first. false: swap at once (async runs). */
  drain?: boolean;
}

export interface PolicyState {
  policy: PolicySpec | null;
  activatedAt: string | null;
  switches: number;
  inFlight: number;
  /** Policies other than the current one that rollouts in flight use (policy-registry.ts). */
  registry: { switchId: string; inFlight: number; ready: boolean; idleMs: number }[];
}

export interface SwitchAnswer extends PolicyState {
  switched: boolean;
  undrained: number;
  drainMs: number;
  drain: boolean;
}

export interface AdminOptions {
  /** Default: process.env.AGL_PROXY_ADMIN_TOKEN. */
  token?: string;
  timeoutMs?: number;
}

function headers(o: AdminOptions): Record<string, string> {
  const token = o.token ?? process.env.AGL_PROXY_ADMIN_TOKEN;
  return token ? { authorization: `Bearer ${token}` } : {};
}

export function switchPolicy(proxyUrl: string, req: SwitchRequest, o: AdminOptions = {}): Promise<SwitchAnswer> {
  return fetchJson<SwitchAnswer>(`${proxyUrl.replace(/\/+$/, '')}/admin/policy`, { body: req, headers: headers(o), timeoutMs: o.timeoutMs ?? 180_000 });
}

export function getPolicy(proxyUrl: string, o: AdminOptions = {}): Promise<PolicyState> {
  return fetchJson<PolicyState>(`${proxyUrl.replace(/\/+$/, '')}/admin/policy`, { headers: headers(o), timeoutMs: o.timeoutMs ?? 10_000 });
}
