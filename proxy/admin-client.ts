// Client of the proxy's admin endpoint, for the publishPolicy activity and tools: switch the served policy
// (idempotent per switchId) and read the current one.
import { fetchJson } from '../common/http';
import type { PolicySpec, SamplingDefaults } from './policy-spec';

export interface SwitchRequest {
  switchId: string;
  modelName: string;
  samplerPath?: string;
  baseModel?: string;
  renderer?: string;
  sampling?: Partial<SamplingDefaults>;
}

export interface PolicyState {
  policy: PolicySpec | null;
  activatedAt: string | null;
  switches: number;
  inFlight: number;
}

export interface SwitchAnswer extends PolicyState {
  switched: boolean;
  undrained: number;
  drainMs: number;
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
