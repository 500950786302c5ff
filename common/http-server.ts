// The HTTP server every service (store, proxy, trainer) listens with. Long-polls and slow samples hold a
// response open for many seconds, which node allows: its request timeout only bounds how long a client takes to
// *send* its request. So that bound stays on, and a client that trickles a body (or never finishes its headers)
// is answered 408 and let go instead of holding a connection forever.
import { createServer, type RequestListener, type Server } from 'node:http';

export interface ServiceServerOptions {
  /** How long a client may take to send its whole request (default 120 s). */
  requestTimeoutMs?: number;
}

export function createServiceServer(handler: RequestListener, opts: ServiceServerOptions = {}): Server {
  const requestTimeout = opts.requestTimeoutMs ?? 120_000;
  const server = createServer(
    {
      requestTimeout,
      headersTimeout: Math.min(60_000, requestTimeout),
      // How often node looks for such clients; its default (30 s) would stretch short limits.
      connectionsCheckingInterval: Math.max(250, Math.min(5_000, Math.floor(requestTimeout / 4))),
    },
    handler,
  );
  // Longer than the idle time of the clients' connection pools, so a pooled connection is not cut under a request.
  server.keepAliveTimeout = 65_000;
  return server;
}
