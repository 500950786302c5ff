// The proxy's HTTP server (node:http): the agent APIs (chat completions, Responses, Messages, Completions; plain
// and rollout-scoped; call-route.ts), models, health, and the admin policy endpoint.
import http from 'node:http';
import { requireTokenOrTrusted, sameSecret } from '../common/access';
import { answerClientErrorsWithJson } from '../common/client-error';
import { createServiceServer } from '../common/http-server';
import { clip, quote, type RouteDoc } from '../common/front-door';
import type { AddressInfo } from 'node:net';
import { AGENT_APIS } from './apis';
import { Conversations } from './apis/responses-store';
import { serveCall } from './call-route';
import type { CallOptions } from './internal-call';
import { ApiError } from './errors';
import { readJson, send, sendError } from './http-io';
import { PolicyManager } from './policy';
import { PolicyRegistry } from './policy-registry';
import { parseDrain, parsePolicySpec } from './policy-spec';
import type { PolicySpec } from './policy-spec';
import { methodsOf, routeDocs, routeOf } from './routes';
import type { SamplerFactory } from './sampler';
import type { SpanSink } from './span-sink';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProxyOptions {
  host?: string;
  port?: number;
  factory: SamplerFactory;
  sink?: SpanSink | null;
  initialPolicy?: PolicySpec;
  adminToken?: string;
  /** Listen beyond loopback without an admin token (--trusted-network / AGL_TRUSTED_NETWORK=1). */
  trustedNetwork?: boolean;
  drainTimeoutMs?: number;
  callTimeoutMs?: number;
  retryAttempts?: number;
  policyWaitMs?: number;
  maxBodyBytes?: number;
  /** A policy that is not the current one is released after this long without calls (default 120 s). */
  policyIdleMs?: number;
  /** Called after each policy switch (main.ts persists the policy so a restarted proxy resumes it). */
  onSwitch?: (spec: PolicySpec) => void;
  /** What the health route adds when the proxy is degraded (its policy file could not be saved: policy-file.ts). */
  degraded?: () => { status: string; detail: string } | null;
  log?: (line: string) => void;
}

export interface ProxyServer {
  url: string;
  port: number;
  policies: PolicyManager;
  registry: PolicyRegistry;
  server: http.Server;
  /** Every route, as the route fuzz test reads them (routes.ts). */
  routes: RouteDoc[];
  /** Stops accepting calls; with graceMs, lets in-flight calls finish first (at most that long). */
  close(graceMs?: number): Promise<void>;
}

function describe(p: PolicyManager, r: PolicyRegistry) {
  const a = p.current();
  return {
    policy: a ? a.spec : null,
    activatedAt: a ? new Date(a.activatedAt).toISOString() : null,
    switches: p.switches,
    inFlight: p.inFlightCalls(),
    registry: r.describe(),
  };
}

export async function startProxy(opts: ProxyOptions): Promise<ProxyServer> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`[proxy] ${l}\n`));
  const registry = new PolicyRegistry({ factory: opts.factory, idleMs: opts.policyIdleMs, log });
  const policies = new PolicyManager({
    factory: opts.factory,
    drainTimeoutMs: opts.drainTimeoutMs ?? 30_000,
    onSwitch: opts.onSwitch,
    onRetire: (old) => registry.adopt(old),
  });
  const callOptions: CallOptions = {
    policies,
    registry,
    sink: opts.sink ?? null,
    callTimeoutMs: opts.callTimeoutMs ?? 300_000,
    retryAttempts: opts.retryAttempts ?? 0,
    policyWaitMs: opts.policyWaitMs ?? 60_000,
    log,
  };
  // Whoever reaches /admin/policy can point every agent at another model: never open it to the network bare,
  // unless told the network is trusted. A UsageError, so `npm run proxy` exits 2 with the message.
  requireTokenOrTrusted('proxy', opts.host ?? '127.0.0.1', opts.adminToken, 'AGL_PROXY_ADMIN_TOKEN', opts.trustedNetwork === true);
  const maxBody = opts.maxBodyBytes ?? 32 << 20;
  const conversations = new Conversations(opts.sink ?? null);
  if (opts.initialPolicy) await policies.switchTo(opts.initialPolicy);

  const authorized = (req: http.IncomingMessage): boolean =>
    !opts.adminToken || sameSecret(req.headers.authorization, `Bearer ${opts.adminToken}`);

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { route, scope: urlScope } = routeOf(req.url ?? '/');
    const method = req.method ?? 'GET';
    if (route.kind !== 'not-found' && route.kind !== 'call') {
      const methods = methodsOf(route);
      if (!methods.includes(method)) throw new ApiError(405, `${method} is not allowed here; use ${methods.join(' or ')}`, 'invalid_request_error', null, 'method_not_allowed');
    }
    switch (route.kind) {
      case 'health': {
        const a = policies.current();
        const held = registry.describe().map(({ switchId, inFlight }) => ({ switchId, inFlight }));
        // Degraded (disk_full) still answers 200: every call is served, and publishPolicy skips a proxy whose health fails.
        const degraded = opts.degraded?.() ?? null;
        return send(res, 200, { status: 'ok', ...degraded, policy: a?.spec.switchId ?? null, inFlight: policies.inFlightCalls() + registry.inFlightCalls(), registry: held });
      }
      case 'models': {
        const a = policies.current();
        const created = a ? Math.floor(a.activatedAt / 1000) : 0;
        return send(res, 200, { object: 'list', data: a ? [{ id: a.spec.modelName, object: 'model', created, owned_by: 'agl-temporal' }] : [] });
      }
      case 'model': {
        const a = policies.current();
        if (!a || a.spec.modelName !== route.id) throw new ApiError(404, `The model ${quote(route.id)} does not exist`, 'invalid_request_error', 'model', 'model_not_found');
        return send(res, 200, { id: a.spec.modelName, object: 'model', created: Math.floor(a.activatedAt / 1000), owned_by: 'agl-temporal' });
      }
      case 'admin-policy': {
        if (!authorized(req)) throw new ApiError(401, 'admin endpoints need "Authorization: Bearer <AGL_PROXY_ADMIN_TOKEN>"', 'authentication_error', null, 'invalid_api_key');
        if (method === 'GET') return send(res, 200, describe(policies, registry));
        const body = await readJson(req, maxBody);
        const spec = parsePolicySpec(body);
        const result = await policies.switchTo(spec, { drain: parseDrain(body) });
        const how = result.drain ? `drained in ${result.drainMs} ms, ${result.undrained} undrained` : `no drain, ${result.undrained} calls left on older policies`;
        log(`policy ${result.switched ? 'switched to' : 'already'} ${spec.switchId} (${spec.samplerPath ?? spec.baseModel}); ${how}`);
        return send(res, 200, { ...result, ...describe(policies, registry) });
      }
      case 'call':
        return serveCall(req, res, AGENT_APIS[route.api], urlScope, { callOptions, conversations, maxBodyBytes: maxBody });
      default:
        throw new ApiError(404, `no route for ${method} ${clip(route.path)}`, 'invalid_request_error', null, 'not_found');
    }
  }

  const server = createServiceServer((req, res) => {
    handle(req, res).catch((err: unknown) => sendError(res, err, log));
  });
  answerClientErrorsWithJson(server, (message) => new ApiError(400, message, 'invalid_request_error', null, 'bad_request').body());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 12306, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    policies,
    registry,
    server,
    routes: routeDocs(),
    close: async (graceMs = 0) => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (policies.inFlightCalls() + registry.inFlightCalls() > 0 && Date.now() < deadline) await sleep(50);
      server.closeAllConnections();
      await closed;
      registry.close();
    },
  };
}
