// Agent-lightning 1.0's gateway API (15 routes under /healthz, /api, /proxy) on the store server: the route
// table, the key check (the store's token, sent as a bearer token or x-api-key as upstream takes it; /healthz
// open), bodies and answers in FastAPI's shapes. Every answer waits until the writes it made are durable, as
// the store's own routes do.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sameSecret } from '../../common/access';
import { StoreError, ValidationError } from '../errors';
import { readBody } from '../http-body';
import type { LightningStore } from '../lightning-store';
import type { StoreDb } from '../store-db';
import type { JsonObject } from '../types';
import { queryEvents, recordEvent } from './events';
import { DEFAULT_PROXY_OPTIONS, forwardCall, type GatewayProxyOptions, type Reply } from './forward';
import { enqueue, notFound, patch, remove, startedByAgent, type Create1, type StatusPatch } from './lifecycle';
import { deleteModels, readPause, registerModels, writePause } from './models';
import { getRollout, listRollouts, terminalPage } from './queries';
import { createGatewayTables } from './schema';
import * as S from './schemas';
import type { Model1 } from './types';
import { locate, stateOf } from './view';

export interface GatewayOptions {
  store: LightningStore;
  /** The store's token; when set, every route but /healthz needs it. */
  token?: string;
  bodyLimitBytes: number;
  /** Waits until the writes made since `before` (a store.writeCount) are committed and on disk. */
  durable(before: number): Promise<void>;
  proxy?: Partial<GatewayProxyOptions>;
}

interface Request {
  method: string;
  params: string[];
  query: URLSearchParams;
  body(): Promise<unknown>;
  rawBody(): Promise<Buffer>;
  headers: IncomingMessage['headers'];
  signal: AbortSignal;
}

type Handler = (r: Request) => Reply | Promise<Reply>;

const ok = (json: unknown, status = 200): Reply => ({ status, json });

export interface Gateway {
  owns(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

export function createGateway(o: GatewayOptions): Gateway {
  const s: StoreDb = o.store.storeDb;
  createGatewayTables(s.db);
  const proxy: GatewayProxyOptions = { ...DEFAULT_PROXY_OPTIONS, ...o.proxy };
  const inflight = { n: 0 };
  const pauseState = () => ({ ...readPause(s), inflight: inflight.n });

  const routes: { method: string; pattern: RegExp; handle: Handler }[] = [];
  const add = (method: string, pattern: RegExp, handle: Handler) => routes.push({ method, pattern, handle });
  const id = '([^/]+)';

  add('GET', /^\/healthz$/, () => ok({ status: 'ok' }));
  add('POST', /^\/api\/rollouts$/, async (r) => ok(enqueue(s, S.body(S.RolloutCreateListSchema, await r.body()) as Create1[]), 201));
  add('GET', /^\/api\/rollouts$/, (r) => ok(listRollouts(s, S.statesParam(r.query), S.intParam(r.query, 'limit', 500))));
  add('GET', /^\/api\/rollouts\/terminal$/, (r) => ok(terminalPage(s, S.intParam(r.query, 'after', 0), S.intParam(r.query, 'limit', 1000))));
  add('GET', new RegExp(`^/api/rollouts/${id}$`), (r) => ok(getRollout(s, r.params[0]!)));
  add('PATCH', new RegExp(`^/api/rollouts/${id}$`), async (r) => {
    const p = S.body(S.RolloutPatchSchema, (await r.body()) ?? {});
    return ok(patch(s, r.params[0]!, (p.status ?? {}) as StatusPatch));
  });
  add('DELETE', new RegExp(`^/api/rollouts/${id}$`), (r) => {
    remove(s, r.params[0]!);
    return ok(null, 204);
  });
  add('POST', new RegExp(`^/api/rollouts/${id}/attempt/${id}/events$`), async (r) => {
    const [v1Id, attemptId] = r.params as [string, string];
    const e = S.body(S.EventCreateSchema, await r.body());
    const loc = locate(s, v1Id);
    if (!loc) throw notFound(v1Id);
    // A queuing rollout is started (a reward needs its store attempt); one that ended unstarted keeps the event only.
    const started = stateOf(loc) === 'queuing' ? startedByAgent(s, v1Id) : loc;
    return ok(recordEvent(s, started, attemptId, e.event_type, e.data as JsonObject));
  });
  add('GET', new RegExp(`^/api/rollouts/${id}/events$`), (r) => {
    const loc = locate(s, r.params[0]!);
    if (!loc) throw notFound(r.params[0]!);
    return ok(queryEvents(s, loc, {
      eventType: r.query.get('event_type'),
      triplet: r.query.get('format') === 'triplet',
      includeRoutedExperts: S.boolParam(r.query, 'include_routed_experts', true),
    }));
  });
  add('POST', /^\/api\/models$/, async (r) => ok(registerModels(s, S.body(S.ModelListSchema, await r.body()) as Model1[]), 201));
  add('DELETE', /^\/api\/models$/, () => {
    deleteModels(s);
    return ok({ status: 'ok' });
  });
  add('POST', new RegExp(`^/proxy/rollout/${id}/attempt/${id}/mode/${id}/openai/v1/(.+)$`), async (r) => {
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
  add('POST', /^\/proxy\/pause$/, async (r) => {
    const p = S.body(S.PauseSchema, (await r.body()) ?? {});
    writePause(s, true, p.retry_after_seconds, p.reason);
    return ok(pauseState());
  });
  add('POST', /^\/proxy\/resume$/, () => {
    writePause(s, false);
    return ok(pauseState());
  });
  add('GET', /^\/proxy\/state$/, () => ok(pauseState()));

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
      const params = m.slice(1).map((p) => {
        try { return decodeURIComponent(p); } catch { throw new StoreError(`Malformed percent-encoding in the path: ${JSON.stringify(p.slice(0, 100))}`, 400); }
      });
      const before = o.store.writeCount;
      const reply = await route.handle({
        method: req.method, params, query: url.searchParams, headers: req.headers, signal: abort.signal, rawBody,
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
