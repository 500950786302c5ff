// Clients of the services an activity talks to, one per URL per worker process. Credentials come from the
// worker's environment only (TINKER_API_KEY, AGL_STORE_TOKEN, AGL_PROXY_ADMIN_TOKEN), never from history.
import { proxyUrlOf } from '../config/run-config';
import { StoreClient } from '../store/client';
import { ServiceClient } from '../tinker';
import type { RunSettings } from '../shared/run-types';

/** Where this worker reaches the services; set from the worker's flags/environment, they win over the run config. */
export interface ServiceOverrides {
  storeUrl?: string;
  proxyUrl?: string;
  tinkerUrl?: string;
}

let overrides: ServiceOverrides = {};
export function setServiceOverrides(o: ServiceOverrides): void {
  overrides = { ...o };
}
export const storeUrlFor = (s: RunSettings) => overrides.storeUrl ?? s.storeAddress;
export const proxyUrlFor = (s: RunSettings) => overrides.proxyUrl ?? proxyUrlOf(s);
/** The proxies a policy is posted to: the run's list (and this worker's own proxy), else the one proxy as before. */
export function publishTargetsFor(s: RunSettings): string[] {
  const listed = s.proxyUrls ?? []; // absent in settings of runs started before the list
  if (listed.length === 0) return [proxyUrlFor(s)];
  const urls = [...(overrides.proxyUrl ? [overrides.proxyUrl] : []), ...listed].map((u) => u.replace(/\/+$/, ''));
  return [...new Set(urls)];
}
export const tinkerUrlFor = (s: Pick<RunSettings, 'baseUrl'>) => overrides.tinkerUrl ?? s.baseUrl;
export const storeFor = (s: RunSettings) => storeClient(storeUrlFor(s));
export const tinkerFor = (s: RunSettings) => tinkerService(tinkerUrlFor(s));

const stores = new Map<string, StoreClient>();
const tinkers = new Map<string, ServiceClient>();

export function storeClient(url: string): StoreClient {
  let c = stores.get(url);
  if (!c) {
    c = new StoreClient(url, { timeoutMs: 30_000 });
    stores.set(url, c);
  }
  return c;
}

/** `baseUrl` null = the hosted Tinker service. */
export function tinkerService(baseUrl: string | null): ServiceClient {
  const key = baseUrl ?? '';
  let c = tinkers.get(key);
  if (!c) {
    c = new ServiceClient({ baseUrl: baseUrl ?? undefined, log: (line) => process.stderr.write(`[tinker] ${line}\n`) });
    tinkers.set(key, c);
  }
  return c;
}

export async function closeServices(): Promise<void> {
  await Promise.all([...tinkers.values()].map((c) => c.close()));
  tinkers.clear();
  stores.clear();
}
