// A store server with its 1.0 gateway on a fresh database, and a plain HTTP client for the 1.0 routes.
import { launchMetadata } from '../../gateway/launch';
import type { Rollout } from '../../store/types';
import { startTestStore, type TestStore } from '../store/helpers';
import type { StoreWithGatewayOptions } from '../../gateway/store-server';

export interface Answer {
  status: number;
  json: any;
  headers: Headers;
}

export interface GatewayStore extends TestStore {
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** A rollout as a training run enqueues it for 1.0 agents (run config `aglController`). */
  runRollout(input: unknown, config?: { max_attempts?: number; retry_condition?: ('failed' | 'timeout' | 'unresponsive')[]; timeout_seconds?: number | null }, resourcesId?: string): Promise<Rollout>;
}

export const HELLO_LAUNCH = { agentClass: 'agl1_hello:HelloAgent', envMap: { AGL_TASK: 'input' }, jobTemplate: null };

export async function startGatewayStore(options: Partial<StoreWithGatewayOptions> = {}): Promise<GatewayStore> {
  const t = await startTestStore({ gateway: { retryDelayMs: () => 10, ...options.gateway }, ...options });
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(t.server.url + path, {
      method,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...headers },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null, headers: res.headers };
  };
  const runRollout: GatewayStore['runRollout'] = (input, config = {}, resourcesId) =>
    t.client.enqueueRollout(input as never, { mode: 'train', metadata: launchMetadata(HELLO_LAUNCH), config, resourcesId: resourcesId ?? null });
  return { ...t, api, runRollout };
}
