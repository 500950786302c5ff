// Agent-lightning 1.0's gateway API (15 routes under /healthz, /api, /proxy), mounted on the store server: the route
// table, the key check (the store's token, sent as a bearer token or x-api-key as upstream takes it; /healthz
// open), bodies and answers in FastAPI's shapes. Every answer waits until the writes it made are durable, as
// the store's own routes do.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sameSecret } from '../common/access';
import { compilePath, idProblem, quote, schemaFields, type RouteDoc } from '../common/front-door';
import type { z } from 'zod';
import { StoreError, ValidationError } from '../store/errors';
import { readBody } from '../store/http-body';
import type { LightningStore } from '../store/lightning-store';
import type { StoreDb } from '../store/store-db';
import type { JsonObject } from '../store/types';
import { queryEvents, recordEvent } from './events';
import { DEFAULT_PROXY_OPTIONS, forwardCall, type GatewayProxyOptions, type Reply } from './forward';
import { enqueue, notFound, patch, remove, startedByAgent, type Create1, type StatusPatch } from './lifecycle';
import { deleteModels, readPause, registerModels, writePause } from './models';
import { getRollout, listRollouts, terminalPage } from './queries';
import { createGatewayTables } from './schema';
import * as S from './schemas';
import type { Model1, State } from './types';
import { invalidPath, type QueryParam } from './schemas';
import { locate, stateOf } from './view';

export interface GatewayOptions {
  store: LightningStore;
  /** The store's token; when set, every route but /healthz needs it. */
  token?: string;
  bodyLimitBytes: number;
  /** Waits until the writes made since `before` (a store.writeCount) are committed and on disk. */
  durable(before: number): Promise<void>;
  proxy?: Partial<GatewayProxyOptions>;
  /** The store's health (disk full, damaged database): /healthz answers it. */
  health?: () => { status: string };
}

interface GatewayRoute {
  method: string;
  pattern: RegExp;
  keys: string[];
  /** The parameter that takes the rest of the path (the forwarded API path), if any. */
  rest: string | null;
  query: Record<string, QueryParam>;
  doc: RouteDoc;
  handle: Handler;
}

interface Request {
  method: string;
  params: string[];
  /** The query parameters the route declares, parsed (schemas.ts queryParams). */
  q: Record<string, unknown>;
  body(): Promise<unknown>;
  rawBody(): Promise<Buffer>;
  headers: IncomingMessage['headers'];
  signal: AbortSignal;
}

type Handler = (r: Request) => Reply | Promise<Reply>;

const ok = (json: unknown, status = 200): Reply => ({ status, json });

export interface Gateway {
  /** The route table, as the route fuzz test reads it. */
  routes: RouteDoc[];
  owns(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

export function createGateway(o: GatewayOptions): Gateway {
  const s: StoreDb = o.store.storeDb;
  createGatewayTables(s.db);
  const proxy: GatewayProxyOptions = { ...DEFAULT_PROXY_OPTIONS, ...o.proxy };
  const inflight = { n: 0 };
  const pauseState = () => ({ ...readPause(s), inflight: inflight.n });

  const routes: GatewayRoute[] = [];
  /** A route: `path` names its parameters ({id}, {path*} for the rest), `query` the query parameters it reads. */
  const add = (method: string, path: string, handle: Handler, o: { query?: Record<string, QueryParam>; body?: z.ZodType } = {}) => {
    const { pattern, keys, rest } = compilePath(path);
    const doc: RouteDoc = { method, path };
    if (o.query) doc.query = Object.fromEntries(Object.entries(o.query).map(([k, q]) => [k, q.kind === 'states' ? 'list' : q.kind]));
    if (o.body) doc.fields = schemaFields(o.body);
    routes.push({ method, pattern, keys, rest, query: o.query ?? {}, doc, handle });
  };
  const limit = (fallback: number): QueryParam => ({ kind: 'int', fallback });

  add('GET', '/healthz', () => {
    const h = o.health?.();
    return h && h.status !== 'ok' ? ok(h, 503) : ok({ status: 'ok' });
  });
  add('POST', '/api/rollouts', async (r) => ok(enqueue(s, S.body(S.RolloutCreateListSchema, await r.body()) as Create1[]), 201), { body: S.RolloutCreateListSchema });
  add('GET', '/api/rollouts', (r) => ok(listRollouts(s, r.q.state_in as State[], r.q.limit as number)),
    { query: { state_in: { kind: 'states' }, limit: limit(500) } });
  add('GET', '/api/rollouts/terminal', (r) => ok(terminalPage(s, r.q.after as number, r.q.limit as number)),
    { query: { after: limit(0), limit: limit(1000) } });
  add('GET', '/api/rollouts/{rollout_id}', (r) => ok(getRollout(s, r.params[0]!)));
  add('PATCH', '/api/rollouts/{rollout_id}', async (r) => {
    const p = S.body(S.RolloutPatchSchema, (await r.body()) ?? {});
    return ok(patch(s, r.params[0]!, (p.status ?? {}) as StatusPatch));
  }, { body: S.RolloutPatchSchema });
  add('DELETE', '/api/rollouts/{rollout_id}', (r) => {
    remove(s, r.params[0]!);
    return ok(null, 204);
  });
  add('POST', '/api/rollouts/{rollout_id}/attempt/{attempt_id}/events', async (r) => {
    const [v1Id, attemptId] = r.params as [string, string];
    const e = S.body(S.EventCreateSchema, await r.body());
    const loc = locate(s, v1Id);
    if (!loc) throw notFound(v1Id);
    // A queuing rollout is started (a reward needs its store attempt); one that ended unstarted keeps the event only.
    const started = stateOf(loc) === 'queuing' ? startedByAgent(s, v1Id) : loc;
    return ok(recordEvent(s, started, attemptId, e.event_type, e.data as JsonObject));
  }, { body: S.EventCreateSchema });
  add('GET', '/api/rollouts/{rollout_id}/events', (r) => {
    const loc = locate(s, r.params[0]!);
    if (!loc) throw notFound(r.params[0]!);
    return ok(queryEvents(s, loc, {
      eventType: r.q.event_type as string | null,
      triplet: r.q.format === 'triplet',
      includeRoutedExperts: r.q.include_routed_experts as boolean,
    }));
  }, { query: { event_type: { kind: 'string' }, format: { kind: 'string' }, include_routed_experts: { kind: 'bool', fallback: true } } });
  add('POST', '/api/models', async (r) => ok(registerModels(s, S.body(S.ModelListSchema, await r.body()) as Model1[]), 201), { body: S.ModelListSchema });
  add('DELETE', '/api/models', () => {
    deleteModels(s);
    return ok({ status: 'ok' });
  });
  add('POST', '/proxy/rollout/{rollout_id}/attempt/{attempt_id}/mode/{mode}/openai/v1/{path*}', async (r) => {
    const [v1Id, attemptId, mode, path] = r.params as [string, string, string, string];
    const raw = await r.rawBody();
    let parsed: { ok: true; value: unknown } | { ok: false } = { ok: true, value: undefined };
    try {
      if (raw.length > 0) parsed = { ok: true, value: JSON.parse(raw.toString('utf8')) };
    } catch {
      parsed = { ok: false };
    }
    return forwardCall({ s, options: proxy, inflight, durable: o.durable, writeCount: () => o.store.writeCount }, {
      v1Id, attemptId, mode, path, body: parsed, signal: r.signal,
      agentRetries: Number(r.headers['x-stainless-retry-count'] ?? 0) || 0,
    });
  });
  add('POST', '/proxy/pause', async (r) => {
    const p = S.body(S.PauseSchema, (await r.body()) ?? {});
    writePause(s, true, p.retry_after_seconds, p.reason);
    return ok(pauseState());
  }, { body: S.PauseSchema });
  add('POST', '/proxy/resume', () => {
    writePause(s, false);
    return ok(pauseState());
  });
  add('GET', '/proxy/state', () => ok(pauseState()));

  const authorized = (req: IncomingMessage): boolean => {
    if (!o.token) return true;
    const key = req.headers['x-api-key'];
    return sameSecret(req.headers.authorization, `Bearer ${o.token}`) || sameSecret(Array.isArray(key) ? key[0] : key, o.token);
  };

  async function answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<Reply> {
    const path = url.pathname;
    if (path !== '/healthz' && !authorized(req)) return { status: 401, json: { detail: 'Invalid or missing API key' } };
    let pathMatched = false;
    for (const route of routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      pathMatched = true;
      if (route.method !== req.method) continue;
      const abort = new AbortController();
      res.on('close', () => { if (!res.writableFinished) abort.abort(); });
      let raw: Promise<Buffer> | null = null;
      const rawBody = () => (raw ??= readBody(req, o.bodyLimitBytes));
      const params = m.slice(1).map((p, i) => {
        let v: string;
        try { v = decodeURIComponent(p); } catch { throw new StoreError(`Malformed percent-encoding in the path: ${quote(p)}`, 400); }
        // An id (not the forwarded path's rest) must be one a URL can address again.
        const problem = route.keys[i] === route.rest ? null : idProblem(v);
        if (problem) throw invalidPath(route.keys[i]!, problem);
        return v;
      });
      const q = S.queryParams(url.searchParams, route.query);
      const before = o.store.writeCount;
      const reply = await route.handle({
        method: req.method, params, q, headers: req.headers, signal: abort.signal, rawBody,
        body: async () => {
          const b = await rawBody();
          if (b.length === 0) return undefined;
          try { return JSON.parse(b.toString('utf8')) as unknown; } catch (err) {
            const msg = `JSON decode error: ${(err as Error).message}`;
            throw new ValidationError(msg, [{ loc: ['body'], msg, type: 'json_invalid' }]);
          }
        },
      });
      await o.durable(before);
      return reply;
    }
    return pathMatched ? { status: 405, json: { detail: 'Method Not Allowed' } } : { status: 404, json: { detail: 'Not Found' } };
  }

  return {
    routes: routes.map((r) => r.doc),
    owns: (path) => path === '/healthz' || path.startsWith('/api/') || path.startsWith('/proxy/'),
    async handle(req, res, url) {
      let reply: Reply;
      try {
        reply = await answer(req, res, url);
      } catch (err) {
        if (res.destroyed) return; // the agent went away (upstream answers 499 to nobody)
        if (err instanceof ValidationError) reply = { status: 422, json: { detail: err.issues } };
        else if (err instanceof StoreError) reply = { status: err.status, json: { detail: err.message } };
        else throw err;
        if (err instanceof StoreError && err.status === 413) res.setHeader('connection', 'close');
      }
      if (res.destroyed) return;
      if (reply.status === 204) {
        res.writeHead(204).end();
        return;
      }
      const text = JSON.stringify(reply.json ?? null);
      res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...reply.headers });
      res.end(text);
    },
  };
}
