// Shared setup for store tests: a server (with its 1.0 gateway, as `npm run store` serves it) on a free port with a
// fresh database in a temp dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StoreClient } from '../../store/client';
import { startStoreWithGateway, type StoreWithGatewayOptions } from '../../gateway/store-server';
import type { StoreServer } from '../../store/server';

export interface TestStore {
  server: StoreServer;
  client: StoreClient;
  dir: string;
  close(): Promise<void>;
}

export async function startTestStore(options: Partial<StoreWithGatewayOptions> = {}): Promise<TestStore> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-store-test-'));
  const server = await startStoreWithGateway({ dbPath: path.join(dir, 'store.sqlite'), port: 0, log: () => {}, ...options });
  const client = new StoreClient(server.url, { retryDelaysMs: [50, 100], token: options.token ?? '' });
  return {
    server, client, dir,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const LLM_RESOURCES = {
  main_llm: { resource_type: 'proxy_llm' as const, endpoint: 'http://127.0.0.1:9/v1', model: 'test-model', api_key: null, sampling_parameters: {} },
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function postRaw(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; text: string; body: Buffer }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, signal: AbortSignal.timeout(10_000) });
  const buf = Buffer.from(await res.arrayBuffer());
  return { status: res.status, text: buf.toString('utf8'), body: buf };
}
