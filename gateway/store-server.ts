// The store's server with the Agent-lightning 1.0 gateway mounted: v0.3 clients (/v1/agl, /v1/traces) and 1.0
// clients (/healthz, /api, /proxy) on one port and one database. What `npm run store` starts (main.ts).
import { startStoreServer, type StoreServer, type StoreServerOptions } from '../store/server';
import type { GatewayProxyOptions } from './forward';
import { createGateway } from './http';

export interface StoreWithGatewayOptions extends StoreServerOptions {
  /** The gateway's proxy: its model name, temperatures, upstream timeout and retry pauses (forward.ts). */
  gateway?: Partial<GatewayProxyOptions>;
}

export function startStoreWithGateway(options: StoreWithGatewayOptions): Promise<StoreServer> {
  const { gateway, ...store } = options;
  return startStoreServer({ ...store, mount: (ctx) => createGateway({ ...ctx, proxy: gateway }) });
}
