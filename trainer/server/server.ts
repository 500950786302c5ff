// HTTP front of the local trainer: routes /api/v1/* to TinkerService, decodes JSON or protobuf bodies,
// long-polls retrieve_future, encodes sample / forward_backward results as protobuf when the poll asks for
// it, and turns bad input into {"error", "category": "user"} with a 4xx status while it keeps serving.
import { clip, quote, type RouteDoc } from '../../common/front-door';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServiceServer } from '../../common/http-server';
import { answerClientErrorsWithJson } from '../../common/client-error';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../engine';
import {
  WireFormatError,
  forwardBackwardOutputToJson,
  forwardBackwardOutputToProto,
  forwardBackwardRequestFromProto,
  sampleResultToJson,
  sampleResultToProto,
} from '../../tinker/wire/codec';
import { zstdDecompress } from '../../tinker/wire/zstd';
import { Access, AuthError } from './access';
import { RequestError, errorPayload, type FuturePayload } from './futures';
import { TinkerService } from './tinker-service';
import { asBody, optBool, reqString, type Body } from './validate';

const PROTO = 'application/x-protobuf';
const MAX_BODY = 256 << 20;

export interface TrainerServerOptions {
  engine: Engine;
  dataDir: string;
  host?: string;
  port?: number;
  /** When set, every request but healthz needs `Authorization: Bearer <token>` or `X-API-Key: <token>`. */
  token?: string;
  /** JWT mode (see access.ts): the lifetime of each JWT handed out by POST /auth/token. */
  jwtLifetimeSeconds?: number;
  /** Extra flags in the client/config answer (e.g. {"proto_compress_fwdbwd": true, "fwdbwd_max_chunk_len": 2}). */
  clientFlags?: Record<string, unknown>;
  longPollMs?: number;
  gapTimeoutMs?: number;
  maxLoadedSamplers?: number;
  sessionTtlMs?: number;
  log?: (line: string) => void;
}

export interface TrainerServer {
  readonly url: string;
  readonly port: number;
  /** Every route (the table buildRoutes makes, under /api/v1), as the route fuzz test reads them. */
  readonly routes: RouteDoc[];
  readonly service: TinkerService;
  readonly access: Access;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, body: Buffer, params: string[], res: ServerResponse) => Promise<unknown>;

function json(body: Buffer): Body {
  if (body.length === 0) return {};
  try {
    return asBody(JSON.parse(body.toString('utf8')));
  } catch (err) {
    if (err instanceof RequestError) throw err;
    throw new RequestError(`request body is not valid JSON: ${(err as Error).message}`);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendProto(res: ServerResponse, bytes: Uint8Array): void {
  res.writeHead(200, { 'content-type': PROTO, 'content-length': bytes.byteLength });
  res.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new RequestError(`request body over ${MAX_BODY} bytes`, 413));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function buildRoutes(service: TinkerService, access: Access): Map<string, Handler> {
  const routes = new Map<string, Handler>();
  const post = (path: string, h: (b: Body) => unknown) => routes.set(`POST ${path}`, async (_req, body) => h(json(body)));

  // Open to all (a liveness probe); its disk use only to a caller a closed route would let in.
  routes.set('GET /healthz', async (req, _body, _p, res) => {
    const allowed = await access.check('/healthz/disk', req).then(() => true, () => false);
    const disk = allowed ? await service.diskUse() : undefined;
    const health = service.disk.health(); // disk_full after a write failed for lack of space, until there is room
    if (health.status !== 'ok') res.statusCode = 503;
    return disk ? { ...health, disk } : health;
  });
  routes.set('GET /get_server_capabilities', async () => service.capabilities());
  post('/client/config', () => access.clientConfig());
  post('/auth/token', () => access.mint());
  post('/client/dynamic_config', () => ({ refresh_interval_sec: 300 }));
  post('/telemetry', () => ({ status: 'accepted' }));
  post('/cancel_future', () => ({}));
  post('/create_session', (b) => service.sessions.create(b));
  post('/session_heartbeat', (b) => service.sessions.heartbeat(b));
  routes.set('POST /sessions/*/finish', async (_req, body, [id]) => service.sessions.finish(id, json(body)));
  post('/join_sampling_session', (b) => service.joinSamplingSession(b));
  post('/create_model', (b) => service.createModel(b));
  post('/get_info', (b) => service.getInfo(b));
  post('/unload_model', (b) => service.unloadModel(b));
  post('/optim_step', (b) => service.optimStep(b));
  post('/save_weights', (b) => service.saveWeights(b));
  post('/save_weights_for_sampler', (b) => service.saveWeightsForSampler(b));
  post('/load_weights', (b) => service.loadWeights(b));
  post('/create_sampling_session', (b) => service.createSamplingSession(b));
  post('/asample', (b) => service.sample(b));
  post('/weights_info', (b) => service.rest.weightsInfo(b));
  post('/forward', (b) => service.forwardBackwardJson(b, true));
  routes.set('POST /forward_backward', async (req, body) => {
    const encoding = req.headers['content-encoding'];
    if (encoding === 'zstd') body = await unzstd(body);
    else if (encoding && encoding !== 'identity') throw new RequestError(`Content-Encoding ${encoding} is not supported (only zstd)`, 415);
    if ((req.headers['content-type'] ?? '').includes(PROTO)) return service.forwardBackward(forwardBackwardRequestFromProto(body));
    return service.forwardBackwardJson(json(body), false);
  });
  routes.set('GET /samplers/*', async (_req, _body, [id]) => service.sampler(id));
  routes.set('GET /training_runs/*', async (_req, _body, [id]) => service.rest.trainingRun(id));
  routes.set('GET /training_runs/*/checkpoints', async (_req, _body, [id]) => service.rest.listCheckpoints(id));
  routes.set('DELETE /training_runs/*/checkpoints/**', async (_req, _body, [id, ckpt]) => service.deleteCheckpoint(id, ckpt));
  routes.set('PUT /training_runs/*/checkpoints/*/*/ttl', async (_req, body, [id, kind, name]) => service.rest.setCheckpointTtl(id, `${kind}/${name}`, json(body)));
  routes.set('POST /retrieve_future', async (req, body, _p, res) => {
    const b = json(body);
    const requestId = reqString(b, 'request_id');
    optBool(b, 'allow_metadata_only');
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const payload = await service.futures.wait(requestId, service.longPollMs, abort.signal);
    // 410 = the promise is gone (expired, or made before a restart): the SDK re-submits samples on it.
    if (payload === undefined) {
      res.statusCode = 410;
      return { error: `unknown or expired request_id ${quote(requestId)} (the trainer may have restarted)`, category: 'server' };
    }
    if (payload === 'pending') return { type: 'try_again', request_id: requestId, queue_state: 'active' };
    return encodePayload(payload, (req.headers.accept ?? '').includes(PROTO), res);
  });
  return routes;
}

async function unzstd(body: Buffer): Promise<Buffer> {
  try {
    return Buffer.from(await zstdDecompress(body, MAX_BODY));
  } catch (err) {
    throw new RequestError(`bad zstd body: ${(err as Error).message}`, err instanceof RangeError && /over the limit/.test((err as Error).message) ? 413 : 400);
  }
}

/** Results go back as protobuf only for sample / forward_backward and only when asked (§A.7). */
function encodePayload(p: FuturePayload, wantProto: boolean, res: ServerResponse): unknown {
  switch (p.kind) {
    case 'error':
      return { error: p.error, category: p.category }; // made one line, bounded and without paths by errorPayload
    case 'json':
      return p.body;
    case 'sample':
      if (wantProto) return sendProto(res, sampleResultToProto(p.result));
      return sampleResultToJson(p.result);
    case 'forward_backward':
      if (wantProto) return sendProto(res, forwardBackwardOutputToProto(p.result));
      return forwardBackwardOutputToJson(p.result);
  }
}

/** The table's keys ("POST /sessions/{*}/finish") as route docs: a '*' segment is one parameter, '**' the rest. */
export function routeDocs(routes: Map<string, Handler>): RouteDoc[] {
  return [...routes.keys()].map((key) => {
    const [method, pattern] = key.split(' ') as [string, string];
    let n = 0;
    const path = pattern.split('/').map((seg) => (seg === '**' ? `{rest${n++}*}` : seg === '*' ? `{p${n++}}` : seg)).join('/');
    return { method, path: `/api/v1${path}` };
  });
}

/** decodeURIComponent answering 400 for malformed percent-encoding (its URIError), never a 500. */
function decodeSegment(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    throw new RequestError(`malformed percent-encoding in the path: ${quote(seg.slice(0, 100))}`, 400);
  }
}

function match(routes: Map<string, Handler>, method: string, path: string): [Handler, string[]] | undefined {
  const exact = routes.get(`${method} ${path}`);
  if (exact) return [exact, []];
  const segs = path.split('/').filter(Boolean);
  for (const [key, handler] of routes) {
    const [m, pattern] = key.split(' ');
    if (m !== method || !pattern.includes('*')) continue;
    const pat = pattern.split('/').filter(Boolean);
    const params: string[] = [];
    let ok = true;
    for (let i = 0; i < pat.length; i++) {
      if (pat[i] === '**') {
        params.push(segs.slice(i).map(decodeSegment).join('/'));
        ok = segs.length > i;
        break;
      }
      if (i >= segs.length) ok = false;
      else if (pat[i] === '*') params.push(decodeSegment(segs[i]));
      else if (pat[i] !== segs[i]) ok = false;
      if (!ok) break;
      if (i === pat.length - 1 && segs.length !== pat.length) ok = false;
    }
    if (ok) return [handler, params];
  }
  return undefined;
}

export async function startTrainerServer(opts: TrainerServerOptions): Promise<TrainerServer> {
  const service = new TinkerService(opts);
  const access = new Access(opts);
  await service.restore();
  const routes = buildRoutes(service, access);
  const log = opts.log ?? (() => undefined);

  const server: Server = createServiceServer((req, res) => {
    void (async () => {
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://local');
      } catch {
        // e.g. `GET //`: used to throw outside the try below and take the whole trainer down.
        send(res, 400, { error: `malformed request target ${quote(String(req.url))}`, category: 'user' });
        return;
      }
      const prefix = '/api/v1';
      try {
        if (!url.pathname.startsWith(prefix)) throw new RequestError(`no such endpoint ${url.pathname}`, 404);
        const path = url.pathname.slice(prefix.length) || '/';
        await access.check(path, req);
        const found = match(routes, req.method ?? 'GET', path);
        if (!found) throw new RequestError(`no such endpoint ${req.method} ${url.pathname}`, 404);
        const body = await readBody(req);
        const result = await found[0](req, body, found[1], res);
        if (!res.headersSent) send(res, res.statusCode === 410 || res.statusCode === 503 ? res.statusCode : 200, result ?? {});
      } catch (err) {
        if (res.headersSent) {
          res.destroy(); // a streamed or long-poll answer failed half-way: nothing else can be said on it
          return;
        }
        if (err instanceof AuthError && err.invalidToken) res.setHeader('www-authenticate', 'Bearer error="invalid_token"');
        const failure = errorPayload(err, service.disk);
        if (failure.kind !== 'error') return; // never: errorPayload always says why
        if (err instanceof RequestError) send(res, err.status, { error: failure.error, category: 'user' });
        else if (err instanceof WireFormatError || (err as Error)?.name === 'UserError') send(res, 400, { error: failure.error, category: 'user' });
        else if (failure.category === 'user') {
          // A full disk (errorPayload): a 4xx, which neither the SDK nor our client retries, and says so.
          res.setHeader('x-should-retry', 'false');
          send(res, 400, { error: failure.error, category: 'user' });
        }
        else {
          log(`error on ${req.method} ${clip(url.pathname)}: ${(err as Error)?.stack ?? String(err)}`);
          send(res, 500, { error: failure.error, category: 'server' });
        }
      }
    })().catch((err: unknown) => {
      // Last resort: an error while answering must never become an unhandled rejection (which ends the process).
      log(`error while answering ${req.method} ${req.url}: ${(err as Error)?.message ?? String(err)}`);
      res.destroy();
    });
  });
  // Requests node's parser refuses get the trainer's JSON error, once (common/client-error.ts).
  answerClientErrorsWithJson(server, (message) => ({ error: message, category: 'user' }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    routes: routeDocs(routes),
    service,
    access,
    close: () =>
      new Promise<void>((resolve) => {
        service.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
