// `npm run store`: the store server standalone: the LightningStore with the Agent-lightning 1.0 gateway mounted. Flags/env: --host (STORE_HOST), --port (STORE_PORT,
// default 4747, 0 = pick a free one), --data DIR (STORE_DATA, default .data/store; the database is DIR/store.sqlite),
// --sync full|normal (STORE_SYNC). AGL_STORE_TOKEN, when set, is the bearer token every request must carry; bound
// beyond loopback, the store refuses to start without it unless --trusted-network (AGL_TRUSTED_NETWORK=1).
import path from 'node:path';
import { requireTokenOrTrusted } from '../common/access';
import { announceListening, exitOnSignal, parseServiceArgs, runMain, UsageError } from '../common/service-args';
import { startStoreWithGateway } from './store-server';

runMain(async () => {
  const args = parseServiceArgs(process.argv.slice(2), {
    name: 'store',
    envPrefix: 'STORE',
    defaultPort: 4747,
    defaultDataDir: '.data/store',
    extra: { sync: 'STORE_SYNC' },
  });
  // Before anything is opened: an open service on the network is refused unless the network is trusted.
  requireTokenOrTrusted('store', args.host, process.env.AGL_STORE_TOKEN || undefined, 'AGL_STORE_TOKEN', args.trustedNetwork);
  const sync = args.values.sync ?? 'full';
  if (sync !== 'full' && sync !== 'normal') throw new UsageError(`store: --sync must be full or normal, got ${sync}`);
  const server = await startStoreWithGateway({
    dbPath: path.join(args.dataDir, 'store.sqlite'),
    host: args.host,
    port: args.port,
    token: process.env.AGL_STORE_TOKEN || undefined,
    sync,
  });
  exitOnSignal(() => server.close(), { name: 'store' });
  announceListening('store', args.host, server.port);
});
