// The LightningStore HTTP server: JSON API under /v1/agl (routes.ts), OTLP/HTTP span ingest at /v1/traces,
// the long-poll /v1/agl/waits/rollouts, and a watchdog timer of its own (§3.7) instead of scans piggybacked on requests.
import { diskUse, vacuumSome } from './run-policy/retention';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServiceServer } from '../common/http-server';
import { sameSecret } from '../common/access';
import { answerClientErrorsWithJson } from '../common/client-error';
import type { AddressInfo } from 'node:net';
import { openStoreDatabase, type SyncMode } from './db';
import { StoreError, ValidationError } from './errors';
import { DiskGuard } from './run-policy/disk-guard';
import { DamageWatch } from './damage';
import { clientMessage, clip, quote, schemaFields, type RouteDoc } from '../common/front-door';
import { StallClock } from './stall-clock';
import { GroupCommit } from './group-commit';
import { parseJsonBody, readBody } from './http-body';
import { LightningStore } from './lightning-store';
import { convertRequest, decodeJsonRequest, decodeProtobufRequest, encodeProtobufResponse, encodeRpcStatus, OtlpDecodeError } from './otlp';
import { buildRoutes, matchRoute, validate } from './routes';
import { WaitRolloutsSchema } from './schemas';
import type { Rollout } from './types';

export interface StoreServerOptions {
  /** SQLite file path, or ':memory:'. */
  dbPath: string;
  host?: string;
  port?: number;
  /** When set, every request except /v1/agl/health must carry `Authorization: Bearer <token>`. */
  token?: string;
  bodyLimitBytes?: number;
  watchdogIntervalMs?: number;
  /** Upper bound of a long-poll wait; Python clients give up after 30 s. */
  maxWaitSeconds?: number;
  sync?: SyncMode;
  /** How often the database is checked in the background for damage (damage.ts; default 60 s, 0 = never). */
  integrityCheckMs?: number;
  /** Another API served on this port over the same database (the Agent-lightning 1.0 gateway: gateway/). */
  mount?: (ctx: MountContext) => MountedApi;
  log?: (line: string) => void;
}

/** What a mounted API is given: the store, its token, its body limit, its rule before answering, its health. */
export interface MountContext {
  store: LightningStore;
  token?: string;
  bodyLimitBytes: number;
  /** Waits until the writes made since `before` (a store.writeCount) are committed and on disk. */
  durable(before: number): Promise<void>;
  /** The store's health (disk full, damaged database). */
  health: () => { status: string };
}

/** An API mounted on the store's server: it answers the paths it owns itself, its key check included. */
export interface MountedApi {
  /** Its route table, as the route fuzz test reads it. */
  routes: RouteDoc[];
  owns(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
}

export interface StoreServer {
  url: string;
  port: number;
  store: LightningStore;
  /** Every route the server answers (its JSON API, OTLP, a mounted API's), as the route fuzz test reads them. */
  routes: RouteDoc[];
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json';

function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body === undefined ? null : body);
  res.writeHead(status, { ...headers, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** FastAPI's issue list, each part bounded: a location may hold a key of the input (a record's), a message its value. */
function boundedIssues(issues: ValidationError['issues']): ValidationError['issues'] {
  return issues.slice(0, 20).map((i) => ({ ...i, loc: i.loc.map((l) => (typeof l === 'string' ? clip(l) : l)), msg: clientMessage(i.msg, {}, 300) }));
}

/**
 * An error as the client sees it: the store's own refusals with their message; anything else a 500 with one line
 * (the error's name and message, no stack trace and no path of this machine; the stack goes to the log).
 */
function sendError(res: ServerResponse, err: unknown, log: (line: string) => void): void {
  if (err instanceof ValidationError) return sendJson(res, err.status, { detail: boundedIssues(err.issues) });
  if (err instanceof StoreError) return sendJson(res, err.status, { detail: clientMessage(err.message, ROOTS, 500) });
  const e = err as Error;
  log(`internal error: ${e?.stack ?? String(err)}`);
  const name = e?.name ?? 'Error';
  sendJson(res, 500, { detail: `Internal server error: ${name}: ${clientMessage(String(e?.message ?? err), ROOTS, 300)}`, error_type: name });
}

/** Paths of this machine that error messages must not show, and what they are shown as. */
const ROOTS: Record<string, string> = { [process.cwd()]: '<store dir>' };

export async function startStoreServer(options: StoreServerOptions): Promise<StoreServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[store] ${line}\n`));
  const bodyLimit = options.bodyLimitBytes ?? 32 * 1024 * 1024;
  const maxWait = options.maxWaitSeconds ?? 25;
  const db = openStoreDatabase(options.dbPath, options.sync ?? 'full');
  // The writes of one event-loop turn share a transaction (store-db.ts): one commit, one fsync per turn.
  const store = new LightningStore(db, { batchWrites: true });
  // A full disk: writes answered 507 with the reason, the WAL kept in check, normal again by itself (disk-guard.ts).
  const disk = new DiskGuard(db, options.dbPath, log);
  // A damaged page, met by a request or by the background check: every answer says so from then on (damage.ts).
  const damage = new DamageWatch({ dbPath: options.dbPath, log, intervalMs: options.integrityCheckMs });
  const fail = (res: ServerResponse, err: unknown) => {
    if (damage.noticed(err)) return sendJson(res, 503, { detail: damage.message, status: 'damaged' });
    const rolledBack = disk.full !== null && /rolled back by SQLite/.test(String((err as Error)?.message));
    if (disk.failed(err) || rolledBack) return sendJson(res, 507, { detail: disk.message, status: 'disk_full' });
    sendError(res, err, log);
  };
  /** The store's health: damaged, disk_full or ok. */
  const health = () => damage.health() ?? disk.health();
  const groupCommit = options.dbPath !== ':memory:' && (options.sync ?? 'full') === 'full' ? new GroupCommit(`${options.dbPath}-wal`, options.dbPath) : null;
  /**
   * Call after a handler ran, before answering: waits until what it saw is committed and, when it wrote, on disk.
   * Reads wait for the commit too: they may have seen writes of the open batch.
   */
  const durable = async (writesBefore: number) => {
    const wrote = store.writeCount !== writesBefore; // before awaiting: later requests write meanwhile
    await store.settled();
    if (groupCommit && wrote) await groupCommit.flush(store.commitCount);
    if (wrote) disk.succeeded();
  };
  const routes = buildRoutes(store);
  const mounted = options.mount?.({ store, token: options.token, bodyLimitBytes: bodyLimit, durable, health }) ?? null;
  const openWaits = new Set<() => void>();

  const authorized = (req: IncomingMessage, path: string): boolean => {
    if (!options.token || path === '/v1/agl/health') return true;
    return sameSecret(req.headers.authorization, `Bearer ${options.token}`);
  };

  /** Answers once every known rollout among `ids` is finished, or when the timeout passes. */
  function waitForRollouts(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    const { rollout_ids: ids, timeout } = validate(WaitRolloutsSchema, body);
    const seconds = Math.min(Math.max(timeout ?? maxWait, 0), maxWait);
    // What it reports is read once the open write batch is committed: never a status that could still be lost.
    const answer = () => store.settled()
      .then(() => { if (!res.destroyed) sendJson(res, 200, store.finishedRollouts(ids)); })
      .catch((err) => { if (!res.headersSent) fail(res, err); });
    const pending = store.unfinishedRolloutIds(ids);
    if (pending.size === 0 || seconds === 0) return void answer();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      openWaits.delete(finish);
      void answer();
    };
    const unsubscribe = store.onRolloutsFinished((rollouts: Rollout[]) => {
      for (const r of rollouts) pending.delete(r.rollout_id);
      if (pending.size === 0) finish();
    });
    const timer = setTimeout(finish, seconds * 1000);
    openWaits.add(finish);
    // Caller went away: drop the listener. On the response, not the kept-alive socket, which would collect one
    // listener per long-poll (MaxListenersExceededWarning after ten).
    res.once('close', finish);
  }

  async function handleTraces(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const contentType = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const isJson = contentType === JSON_TYPE;
    const replyError = (status: number, message: string) => {
      if (isJson) return sendJson(res, status, { code: status, message });
      const payload = encodeRpcStatus(status === 400 ? 3 : 13, message);
      res.writeHead(status, { 'content-type': 'application/x-protobuf', 'content-length': payload.length });
      res.end(payload);
    };
    if (!isJson && contentType !== 'application/x-protobuf') {
      return replyError(400, `Unsupported Content-Type ${contentType || '(none)'}: use application/x-protobuf or application/json`);
    }
    let converted;
    try {
      const body = await readBody(req, bodyLimit);
      converted = convertRequest(isJson ? decodeJsonRequest(body) : decodeProtobufRequest(body));
    } catch (err) {
      if (err instanceof OtlpDecodeError) return replyError(400, err.message);
      if (err instanceof StoreError) {
        if (err.status === 413) res.setHeader('connection', 'close'); // the rest of the body is unread
        return replyError(err.status, err.message);
      }
      // Decoding and converting only read the client's payload: whatever fails there is a malformed request
      // (e.g. OTLP/JSON with null where a span or an attribute belongs), not a server error.
      return replyError(400, `Invalid OTLP payload: ${(err as Error)?.message ?? String(err)}`);
    }
    // Spans for unknown rollouts/attempts are rejected (OTLP partial success) instead of failing the whole batch.
    const known = converted.spans.filter((s) => store.attemptExists(s.rollout_id, s.attempt_id));
    const knownSet = new Set(known);
    const reasons = converted.rejected.map((r) => r.reason);
    for (const s of converted.spans) {
      if (!knownSet.has(s)) reasons.push(`span "${s.name}": unknown rollout ${s.rollout_id} / attempt ${s.attempt_id}`);
    }
    const writesBefore = store.writeCount;
    if (known.length > 0) store.addSpans(known);
    await durable(writesBefore);
    if (reasons.length > 0) log(`OTLP: rejected ${reasons.length} span(s): ${reasons.slice(0, 3).join('; ')}`);
    const message = reasons.slice(0, 5).join('; ');
    if (isJson) {
      return sendJson(res, 200, reasons.length ? { partialSuccess: { rejectedSpans: reasons.length, errorMessage: message } } : {});
    }
    const payload = encodeProtobufResponse(reasons.length, message);
    res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': payload.length });
    res.end(payload);
  }

  /** The routes served outside the JSON API's table (routes.ts): they answer on the response themselves. */
  const served: { doc: RouteDoc; serve(req: IncomingMessage, res: ServerResponse): Promise<void> | void }[] = [
    {
      doc: { method: 'GET', path: '/v1/agl/health' },
      serve: (_req, res) => {
        let use: ReturnType<typeof diskUse> | undefined;
        try {
          use = diskUse(db, options.dbPath);
        } catch (err) {
          if (!damage.noticed(err)) throw err; // reading the file's size and free pages met the damage
        }
        const now = health();
        sendJson(res, now.status === 'ok' ? 200 : 503, { ...now, ...(use ? { disk: use } : {}) });
      },
    },
    { doc: { method: 'POST', path: '/v1/traces', fields: ['resourceSpans', 'scopeSpans', 'spans', 'attributes', 'key', 'value'] }, serve: handleTraces },
    {
      // Answered once the rollouts it reports are committed (listeners hear of finished ones only after that).
      doc: { method: 'POST', path: '/v1/agl/waits/rollouts', fields: schemaFields(WaitRolloutsSchema) },
      serve: async (req, res) => waitForRollouts(req, res, parseJsonBody(await readBody(req, bodyLimit))),
    },
  ];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://store');
    } catch {
      return sendJson(res, 400, { detail: `Malformed request target ${quote(String(req.url))}` });
    }
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const isHealth = path === '/v1/agl/health' || path === '/healthz'; // and the 1.0 gateway's, when mounted
    // Fail closed: a damaged database answers nothing but its health, and that it is damaged.
    if (damage.damaged && !isHealth) return sendJson(res, 503, { detail: damage.message, status: 'damaged' });
    if (mounted?.owns(url.pathname)) return mounted.handle(req, res, url); // checks the key itself (the gateway: as upstream does)
    if (!authorized(req, path)) return sendJson(res, 401, { detail: 'Missing or invalid bearer token' });
    const own = served.find((r) => r.doc.path === path && r.doc.method === method);
    if (own) return own.serve(req, res);
    if (['/v1/metrics', '/v1/logs', '/v1/development/profiles'].includes(path)) {
      return sendJson(res, 404, { detail: 'This store takes OTLP traces only (POST /v1/traces); metrics, logs and profiles are not served' });
    }
    const match = matchRoute(routes, method, path);
    if (match === null) return sendJson(res, 404, { detail: 'Not Found' });
    if (match === 'method-not-allowed') return sendJson(res, 405, { detail: 'Method Not Allowed' });
    const body = method === 'POST' ? parseJsonBody(await readBody(req, bodyLimit)) : undefined;
    const writesBefore = store.writeCount;
    const result = match.route.handle({ params: match.params, body, query: url.searchParams, headers: req.headers });
    await durable(writesBefore);
    sendJson(res, result.status, result.json, result.headers);
  }

  const server: Server = createServiceServer((req, res) => {
    handle(req, res).catch((err) => {
      if (res.headersSent) return res.destroy();
      // Drain what is left of an oversized body so the client reads our answer instead of a reset.
      // and close the connection after it: the rest of the body may stay unread, and a kept-alive client would
      // otherwise send its next request into it and wait forever.
      if (err instanceof StoreError && err.status === 413) {
        req.resume();
        res.setHeader('connection', 'close');
      }
      fail(res, err);
    });
  });
  answerClientErrorsWithJson(server, (message) => ({ detail: message }));

  const watchdogMs = options.watchdogIntervalMs ?? 1000;
  const clock = new StallClock(watchdogMs);
  let ticks = 0;
  const watchdog = setInterval(() => {
    disk.tick();
    // Every 10 s: give pages retention freed back to the disk, a few MiB at a time (retention.ts).
    if (++ticks % 10 === 0 && !damage.damaged) {
      try {
        vacuumSome(db);
      } catch (err) {
        if (!damage.noticed(err) && !disk.failed(err)) log(`incremental vacuum: ${(err as Error).message}`);
      }
    }
    const stalledMs = clock.tick();
    if (stalledMs > 0) log(`the store was stalled for ${(stalledMs / 1000).toFixed(1)} s: runner silence counts from now, not from before`);
    if (damage.damaged) return; // nothing is written into a damaged file
    try {
      const n = store.scanUnhealthy(clock.servingSince);
      if (n > 0) log(`watchdog: ${n} attempt(s) timed out or unresponsive`);
    } catch (err) {
      if (!damage.noticed(err) && !disk.failed(err)) log(`watchdog error: ${(err as Error).message}`);
    }
  }, watchdogMs);
  watchdog.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4747, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    store,
    routes: [...served.map((r) => r.doc), ...routes.map((r) => r.doc), ...(mounted?.routes ?? [])],
    async close() {
      clearInterval(watchdog);
      damage.close();
      for (const finish of [...openWaits]) finish();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      try {
        store.flush();
      } catch (err) {
        if (!damage.noticed(err) && !disk.failed(err)) throw err;
      } finally {
        groupCommit?.close();
        db.close();
      }
    },
  };
}
