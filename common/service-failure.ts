// Naming the service a network failure is about. A bare "connect ECONNREFUSED 10.0.0.5:4747" in an activity's last
// failure tells an operator little; "store http://10.0.0.5:4747 unreachable (connection refused)" says which
// process on which host to look at. Pure: the caller gives the services the run talks to.

/** Node's codes for "could not reach it", and how to say them. */
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
};

interface NetError {
  code?: string;
  address?: string;
  hostname?: string;
  port?: number;
  url?: string;
  name?: string;
  message?: string;
  cause?: unknown;
}

/** The first error in the cause chain that says the network failed (a code above, or a request deadline). */
function networkCause(err: unknown): { reason: string; error: NetError } | null {
  for (let e = err as NetError | undefined, depth = 0; e && typeof e === 'object' && depth < 6; e = e.cause as NetError | undefined, depth++) {
    if (e.code && NETWORK_CODES[e.code]) return { reason: NETWORK_CODES[e.code]!, error: e };
    if (e.name === 'TimeoutError' && e.url) return { reason: 'no answer before the deadline', error: e };
  }
  return null;
}

const hostPort = (u: URL) => `${u.hostname.replace(/^\[|\]$/g, '')}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;

/**
 * "store http://h:4747 unreachable (connection refused): connect ECONNREFUSED h:4747", or null when `err` is no
 * network failure. `services` maps a service's name to its URL; an address no service has is named as it is.
 */
export function describeNetworkFailure(err: unknown, services: Record<string, string | null | undefined>): string | null {
  const found = networkCause(err);
  if (!found) return null;
  const e = found.error;
  let target: string | undefined;
  if (e.url) {
    try {
      target = hostPort(new URL(e.url));
    } catch {
      /* not a URL */
    }
  }
  target ??= e.port !== undefined ? `${(e.address ?? e.hostname ?? '').replace(/^::ffff:/, '')}:${e.port}` : e.hostname;
  const detail = (e.message ?? '').split('\n')[0];
  for (const [name, url] of Object.entries(services)) {
    if (!url) continue;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      continue;
    }
    const same = target !== undefined && (target === hostPort(u) || target === u.hostname || sameLoopback(target, u));
    if (same) return `${name} ${url.replace(/\/+$/, '')} unreachable (${found.reason}): ${detail}`;
  }
  return `${target ?? 'a service'} unreachable (${found.reason}): ${detail}`;
}

/** 127.0.0.1:p and localhost:p name the same place. */
function sameLoopback(target: string, u: URL): boolean {
  const [h, p] = [target.slice(0, target.lastIndexOf(':')), target.slice(target.lastIndexOf(':') + 1)];
  const loop = (x: string) => x === 'localhost' || x.startsWith('127.') || x === '::1';
  return loop(h) && loop(u.hostname.replace(/^\[|\]$/g, '')) && p === hostPort(u).split(':').pop();
}
