// The real stack the interop tests call: local trainer (Tinker API, bigram engine), store and proxy, all in
// this process, the proxy sampling through the Tinker client.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parsePolicySpec } from '../../proxy/policy-spec';
import { startProxy } from '../../proxy/server';
import type { ProxyServer } from '../../proxy/server';
import { StoreSpanSink } from '../../proxy/span-sink';
import { TinkerSamplerFactory } from '../../proxy/tinker-sampler';
import { StoreClient } from '../../store/client';
import { startStoreServer } from '../../store/server';
import type { StoreServer } from '../../store/server';
import { createBigramEngine } from '../../trainer/server/bigram-engine';
import { startTrainerServer } from '../../trainer/server/server';
import type { TrainerServer } from '../../trainer/server/server';

export interface Stack {
  trainer: TrainerServer;
  store: StoreServer;
  storeClient: StoreClient;
  proxy: ProxyServer;
  newAttempt(): Promise<{ rolloutId: string; attemptId: string }>;
  spans(rolloutId: string): Promise<any[]>;
  close(): Promise<void>;
}

export async function startStack(): Promise<Stack> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-proxy-interop-'));
  const trainer = await startTrainerServer({ engine: createBigramEngine(), dataDir: path.join(dir, 'trainer'), log: () => {} });
  const store = await startStoreServer({ dbPath: path.join(dir, 'store.sqlite'), port: 0, log: () => {} });
  const factory = new TinkerSamplerFactory({ baseUrl: trainer.url, apiKey: 'tml-local', futureTimeoutMs: 60_000 });
  const proxy = await startProxy({
    port: 0,
    factory,
    sink: new StoreSpanSink(store.url),
    initialPolicy: parsePolicySpec({ switchId: 'initial', modelName: 'local/bigram', baseModel: 'local/bigram', sampling: { maxTokens: 32 } }),
    log: () => {},
  });
  const storeClient = new StoreClient(store.url, { retryDelaysMs: [50], token: '' });
  return {
    trainer,
    store,
    storeClient,
    proxy,
    async newAttempt() {
      const r = (await storeClient.startRollout({ input: {} } as any)) as any;
      return { rolloutId: r.rollout_id, attemptId: r.attempt.attempt_id };
    },
    async spans(rolloutId: string) {
      const res = (await storeClient.querySpans(rolloutId)) as any;
      return Array.isArray(res) ? res : res.items;
    },
    async close() {
      await proxy.close();
      await factory.close();
      await store.close();
      await trainer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
