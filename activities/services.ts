// Clients of the services an activity talks to, one per URL per worker process. Credentials come from the
// worker's environment only (TINKER_API_KEY, AGL_STORE_TOKEN, AGL_PROXY_ADMIN_TOKEN), never from history.
import { StoreClient } from '../store/client';
import { ServiceClient } from '../tinker';

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
