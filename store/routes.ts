// The JSON API of §4.3 as a route table: each route validates its input and calls the store.
// Literal segments come before `{id}` segments where they overlap (rollouts/search before rollouts/{id}, …).
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import { compilePath, idProblem, quote, schemaFields, type RouteDoc } from '../common/front-door';
import { BadRequestError, ValidationError } from './errors';
import type { LightningStore } from './lightning-store';
import * as S from './schemas';
import type {
  EnqueueRolloutRequest, JsonObject, NamedResources, Pagination, QueryResourcesRequest, QueryRolloutsRequest, QuerySpansRequest,
  QueryWorkersRequest, Span, UpdateAttemptRequest, UpdateRolloutRequest,
} from './types';
import { IF_REVISION_HEADER, REVISION_HEADER } from './types';
import { REWARD_VALUE_ATTR } from '../spans/rewards';
import { rewardProblem } from './reward-check';

export interface RouteContext {
  params: Record<string, string>;
  body: unknown;
  /** The query parameters the route declares, checked against its schema. */
  query: unknown;
  headers: IncomingHttpHeaders;
}
export interface RouteResult {
  status: number;
  json: unknown;
  headers?: Record<string, string>;
}
export interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  keys: string[];
  /** What the route reads, as the route fuzz test sees it (common/front-door.ts). */
  doc: RouteDoc;
  handle: (ctx: RouteContext) => RouteResult;
}

/** Query parameters of a GET list route: the schema they are checked against, and which are lists or integers. */
interface QuerySpec {
  schema: z.ZodType;
  lists?: string[];
  ints?: string[];
}

export function validate<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({
    loc: ['body', ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: i.message,
    type: i.code,
  }));
  const summary = issues.map((i) => `${i.loc.slice(1).join('.') || 'body'}: ${i.msg}`).join('; ');
  throw new ValidationError(`Invalid request body: ${summary}`, issues);
}

/** Header `Idempotency-Key` (one rollout) or `metadata.idempotency_key` (per rollout) keys an enqueue. */
export function idempotencyKeys(reqs: EnqueueRolloutRequest[], header: string | undefined): (string | null)[] {
  return reqs.map((req, i) => {
    const fromMetadata = req.metadata?.['idempotency_key'];
    if (typeof fromMetadata === 'string' && fromMetadata !== '') return fromMetadata;
    if (!header) return null;
    return reqs.length === 1 ? header : `${header}#${i}`;
  });
}

const ok = (json: unknown): RouteResult => ({ status: 200, json });
const created = (json: unknown): RouteResult => ({ status: 201, json });

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Query-string parameters of the GET list endpoints → the same objects the POST search endpoints take. */
function queryToObject(q: URLSearchParams, lists: string[], ints: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of new Set(q.keys())) {
    if (lists.includes(key)) out[key] = q.getAll(key);
    else if (ints.includes(key)) {
      const n = Number(q.get(key));
      if (!Number.isInteger(n)) throw new BadRequestError(`Invalid ${key}: ${quote(q.get(key))}, must be an integer`);
      out[key] = n;
    } else out[key] = q.get(key);
  }
  return out;
}

/** A Span body with the optional parts filled in, so stored spans always carry every key Python requires. */
export function normalizeSpan(span: z.infer<typeof S.SpanSchema>): Span {
  return {
    ...span,
    status: span.status ?? { status_code: 'UNSET', description: null },
    attributes: span.attributes ?? {},
    events: span.events ?? [],
    links: span.links ?? [],
    resource: { attributes: span.resource?.attributes ?? {}, schema_url: span.resource?.schema_url ?? '' },
  } as Span;
}

function checkReward(body: unknown): void {
  const span = body as { name?: unknown; attributes?: Record<string, unknown> } | null;
  const attrs = span?.attributes;
  if (!attrs || typeof attrs !== 'object') return;
  const msg = rewardProblem(typeof span.name === 'string' ? span.name : '', attrs);
  if (msg) {
    throw new ValidationError(`Invalid request body: attributes.${REWARD_VALUE_ATTR}: ${msg}`,
      [{ loc: ['body', 'attributes', REWARD_VALUE_ATTR], msg, type: 'finite_number' }]);
  }
}

export function buildRoutes(store: LightningStore): Route[] {
  const routes: Route[] = [];
  /** A route: its handler gets the body as sent and, when it declares `query`, the checked query parameters. */
  const add = (method: Route['method'], path: string, handle: Route['handle'], o: { body?: z.ZodType; query?: QuerySpec } = {}) => {
    const { pattern, keys } = compilePath(path, '/v1/agl');
    const query = o.query;
    const doc: RouteDoc = { method, path: `/v1/agl${path}` };
    if (o.body) doc.fields = schemaFields(o.body);
    if (query) {
      doc.query = Object.fromEntries(schemaFields(query.schema).map((k) => [k, query.lists?.includes(k) ? 'list' : query.ints?.includes(k) ? 'int' : 'string']));
    }
    const run: Route['handle'] = query
      ? (ctx) => handle({ ...ctx, query: validate(query.schema, queryToObject(ctx.query as URLSearchParams, query.lists ?? [], query.ints ?? [])) })
      : handle;
    routes.push({ method, pattern, keys, doc, handle: run });
  };
  const PAGE = ['limit', 'offset'];

  add('GET', '/health', () => ok({ status: 'ok' }));

  add('POST', '/queues/rollouts/enqueue', ({ body, headers }) => {
    const { rollouts } = validate(S.EnqueueManySchema, body);
    const reqs = rollouts as EnqueueRolloutRequest[];
    return created(store.enqueueRollouts(reqs, idempotencyKeys(reqs, headerValue(headers, 'idempotency-key'))));
  }, { body: S.EnqueueManySchema });
  add('POST', '/queues/rollouts/dequeue', ({ body }) => {
    const req = validate(S.DequeueSchema, body) ?? {};
    const limit = req.limit ?? 1;
    return ok(limit <= 0 ? [] : store.dequeue(limit, req.worker_id ?? null, { agent: req.agent ?? null, keyPrefix: req.key_prefix ?? null }));
  }, { body: S.DequeueSchema });

  add('POST', '/rollouts', ({ body, headers }) => {
    const req = validate(S.StartRolloutSchema, body) as EnqueueRolloutRequest & { worker_id?: string | null };
    const key = idempotencyKeys([req], headerValue(headers, 'idempotency-key'))[0] ?? null;
    return created(store.startRollout(req, key));
  }, { body: S.StartRolloutSchema });
  add('GET', '/rollouts', ({ query }) => ok(store.queryRollouts(query as QueryRolloutsRequest)),
    { query: { schema: S.QueryRolloutsSchema, lists: ['status_in', 'rollout_id_in'], ints: PAGE } });
  add('POST', '/rollouts/search', ({ body }) =>
    ok(store.queryRollouts(validate(S.QueryRolloutsSchema, body ?? {}) as QueryRolloutsRequest)), { body: S.QueryRolloutsSchema });
  // The rollout's revision beside it (ours, a header: the body stays Agent-lightning's): what a writer sends back
  // as `x-agl-if-rollout-revision` to write a span only while the rollout is as it read it.
  add('GET', '/rollouts/{rollout_id}', ({ params }) => {
    const rollout = store.getRolloutById(params.rollout_id!);
    return rollout ? { ...ok(rollout), headers: { [REVISION_HEADER]: String(store.rolloutRevision(rollout.rollout_id)) } } : ok(null);
  });
  add('POST', '/rollouts/{rollout_id}', ({ params, body }) =>
    ok(store.updateRollout(params.rollout_id!, validate(S.UpdateRolloutSchema, body ?? {}) as UpdateRolloutRequest)), { body: S.UpdateRolloutSchema });

  add('POST', '/rollouts/{rollout_id}/attempts', ({ params, body }) => {
    const req = validate(S.StartAttemptSchema, body) ?? {};
    return created(store.startAttempt(params.rollout_id!, req.worker_id ?? null));
  }, { body: S.StartAttemptSchema });
  add('GET', '/rollouts/{rollout_id}/attempts', ({ params, query }) => ok(store.queryAttempts(params.rollout_id!, (query ?? {}) as Pagination)),
    { query: { schema: S.QueryAttemptsSchema, ints: PAGE } });
  add('POST', '/rollouts/{rollout_id}/attempts/search', ({ params, body }) =>
    ok(store.queryAttempts(params.rollout_id!, (validate(S.QueryAttemptsSchema, body) ?? {}) as Pagination)), { body: S.QueryAttemptsSchema });
  add('GET', '/rollouts/{rollout_id}/attempts/latest', ({ params }) => ok(store.getLatestAttempt(params.rollout_id!)));
  add('POST', '/rollouts/{rollout_id}/attempts/{attempt_id}', ({ params, body }) =>
    ok(store.updateAttempt(params.rollout_id!, params.attempt_id!, validate(S.UpdateAttemptSchema, body ?? {}) as UpdateAttemptRequest)), { body: S.UpdateAttemptSchema });

  add('GET', '/workers', ({ query }) => ok(store.queryWorkers(query as QueryWorkersRequest)),
    { query: { schema: S.QueryWorkersSchema, lists: ['status_in'], ints: PAGE } });
  add('POST', '/workers/search', ({ body }) =>
    ok(store.queryWorkers(validate(S.QueryWorkersSchema, body ?? {}) as QueryWorkersRequest)), { body: S.QueryWorkersSchema });
  add('GET', '/workers/{worker_id}', ({ params }) => ok(store.getWorkerById(params.worker_id!)));
  add('POST', '/workers/{worker_id}', ({ params, body }) => {
    const req = validate(S.UpdateWorkerSchema, body);
    return ok(store.updateWorker(params.worker_id!, req && 'heartbeat_stats' in req ? (req.heartbeat_stats as JsonObject | null) : undefined));
  }, { body: S.UpdateWorkerSchema });

  add('GET', '/statistics', () => ok(store.statistics()));

  add('GET', '/resources', ({ query }) => ok(store.queryResources(query as QueryResourcesRequest)),
    { query: { schema: S.QueryResourcesSchema, ints: PAGE } });
  add('POST', '/resources', ({ body, headers }) =>
    created(store.addResources(validate(S.NamedResourcesSchema, body) as NamedResources, headerValue(headers, 'idempotency-key') ?? null)), { body: S.NamedResourcesSchema });
  add('GET', '/resources/latest', () => ok(store.getLatestResources()));
  add('GET', '/resources/{resources_id}', ({ params }) => ok(store.getResourcesById(params.resources_id!)));
  add('POST', '/resources/{resources_id}', ({ params, body }) =>
    ok(store.updateResources(params.resources_id!, validate(S.NamedResourcesSchema, body) as NamedResources)), { body: S.NamedResourcesSchema });

  add('POST', '/spans', ({ body, headers }) => {
    checkReward(body);
    const span = normalizeSpan(validate(S.SpanSchema, body));
    // `Prefer: return=minimal` (ours, RFC 7240's preference): the stored span answered as `{"sequence_id"}` alone,
    // not echoed back whole (null still: already held). What the proxy asks, on every call it serves.
    const minimal = /\breturn=minimal\b/.test(headerValue(headers, 'prefer') ?? '');
    const answer = (stored: Span | null) => (stored && minimal ? { sequence_id: stored.sequence_id } : stored);
    const expect = headerValue(headers, IF_REVISION_HEADER);
    if (expect === undefined) return created(answer(store.addSpans([span])[0] ?? null));
    if (!/^\d{1,15}$/.test(expect)) throw new BadRequestError(`Invalid ${IF_REVISION_HEADER} header: ${quote(expect)}, must be a rollout revision (an integer)`);
    // Stored only while the rollout is at that revision (412 otherwise); the answer names the revision after it.
    const written = store.addSpanIfRevision(span, Number(expect));
    return { ...created(answer(written.span)), headers: { [REVISION_HEADER]: String(written.revision) } };
  }, { body: S.SpanSchema });
  add('GET', '/spans', ({ query }) => ok(store.querySpans(query as QuerySpansRequest)), { query: { schema: S.QuerySpansSchema, ints: PAGE } });
  add('POST', '/spans/search', ({ body }) => ok(store.querySpans(validate(S.QuerySpansSchema, body) as QuerySpansRequest)), { body: S.QuerySpansSchema });
  add('POST', '/spans/calls', ({ body }) => {
    const req = validate(S.CallRecordSchema, body);
    return ok(store.callRecord(req.rollout_id, req.attempt_id, req.call_key, req.with_last ?? false));
  }, { body: S.CallRecordSchema });
  add('POST', '/spans/next', ({ body }) => {
    const req = validate(S.NextSequenceSchema, body);
    return ok({ sequence_id: store.nextSequenceIds([req.rollout_id])[0] });
  }, { body: S.NextSequenceSchema });

  // A training run's records (ours; store/run-records.ts).
  add('GET', '/runs', () => ok(store.runRecordRuns()));
  add('POST', '/runs/{run}/records', ({ params, body }) =>
    ok(store.putRunRecords(params.run!, validate(S.PutRunRecordsSchema, body).records)), { body: S.PutRunRecordsSchema });
  add('POST', '/runs/{run}/prune', ({ params, body }) =>
    ok(store.pruneRun(params.run!, validate(S.PruneRunSchema, body).before_batch)), { body: S.PruneRunSchema });
  add('POST', '/runs/{run}/records/search', ({ params, body }) =>
    ok(store.queryRunRecords(params.run!, validate(S.QueryRunRecordsSchema, body))), { body: S.QueryRunRecordsSchema });
  return routes;
}

export function matchRoute(routes: Route[], method: string, path: string):
  { route: Route; params: Record<string, string> } | 'method-not-allowed' | null {
  let pathMatched = false;
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    const params: Record<string, string> = {};
    route.keys.forEach((k, i) => {
      try {
        params[k] = decodeURIComponent(m[i + 1]!);
      } catch {
        throw new BadRequestError(`Malformed percent-encoding in the path parameter ${k}: ${quote(m[i + 1]!)}`);
      }
      const problem = idProblem(params[k]!);
      if (problem) throw new BadRequestError(`Invalid ${k} in the path: ${problem}`);
    });
    return { route, params };
  }
  return pathMatched ? 'method-not-allowed' : null;
}
