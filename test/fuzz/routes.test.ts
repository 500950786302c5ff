// Every route of the store (its JSON API, OTLP and the Agent-lightning 1.0 gateway), the proxy and the trainer,
// fuzzed from the route tables the servers dispatch with (StoreServer.routes, ProxyServer.routes,
// TrainerServer.routes): a route added to a table is fuzzed here with no new test code. For each route: hostile
// path parameters (`..`, encoded separators, bad percent-encoding, 3,000-character ids), its declared query
// parameters with hostile values by kind (integers past 2^64, empty, fractions), bodies from its declared fields
// (or the service's) with hostile values, random JSON and bytes, and now and then another method. Every answer:
// below 500, never a dropped connection, a bounded body, an error in JSON without a stack trace or a path of this
// machine. After: each service healthy, and what was stored before unchanged (a rollout with its attempt, span and
// resources; a trainer model and its saved checkpoint; the proxy's policy).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { RouteDoc } from '../../common/front-door';
import { startTestStore, type TestStore } from '../store/helpers';
import { startHarness, type Harness } from '../proxy/helpers';
import { startTrainerServer, type TrainerServer } from '../../trainer/server/server';
import { createBigramEngine } from '../../trainer/server/bigram-engine';
import { ServiceClient, type TrainingClient } from '../../tinker';
import { fuzz, hostileJsonText, invalidUtf8, jsonOf, report, send, type Answer } from './http-fuzz';

/** Requests per route; the total (over 100 routes) is printed by report() and checked below. */
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS_PER_ROUTE ?? 40);
const ERROR_BODY_LIMIT = 4 * 1024;
const BODY_LIMIT = 1 << 20;
const ADMIN = 'routes-fuzz-admin';

let store: TestStore;
let proxy: Harness;
let trainer: TrainerServer;
let tinker: ServiceClient;
let training: TrainingClient;
let savedPath = '';
const trainerDir = mkdtempSync(path.join(os.tmpdir(), 'agl-routes-fuzz-'));
let storeSnapshot: () => Promise<unknown>;

before(async () => {
  store = await startTestStore({ bodyLimitBytes: 256 * 1024, integrityCheckMs: 0 });
  proxy = await startHarness({ withStore: true, adminToken: ADMIN, maxBodyBytes: 256 * 1024 });
  trainer = await startTrainerServer({ engine: createBigramEngine(), dataDir: trainerDir, port: 0, log: () => {} });
  tinker = new ServiceClient({ baseUrl: trainer.url });
  training = await tinker.createLoraTrainingClient('local/bigram', { rank: 4, seed: 1 });
  savedPath = await training.saveState('kept');

  const c = store.client;
  const attempted = await c.startRollout({ task: 'keep me' }, { workerId: 'w-keep', metadata: { keep: true } });
  const rid = attempted.rollout_id;
  const seq = await c.getNextSpanSequenceId(rid, attempted.attempt.attempt_id);
  await c.addSpan({
    rollout_id: rid, attempt_id: attempted.attempt.attempt_id, sequence_id: seq, trace_id: '0'.repeat(32), span_id: '1'.repeat(16), parent_id: null,
    name: 'agentlightning.annotation', status: { status_code: 'OK', description: null },
    attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 0.5 },
    events: [], links: [], start_time: 1, end_time: 2, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
  } as never);
  const res = await c.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9/v1', model: 'm', api_key: null, sampling_parameters: {} } });
  storeSnapshot = async () => ({
    rollout: await c.getRolloutById(rid),
    attempts: await c.queryAttempts(rid),
    spans: await c.querySpans(rid, null),
    resources: await c.getResourcesById(res.resources_id),
  });
});

after(async () => {
  report('routes');
  await tinker?.close();
  await trainer?.close();
  await proxy?.close();
  await store?.close();
  rmSync(trainerDir, { recursive: true, force: true });
});

// ---- what the requests are made of ----

const pathId = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('..', '.', '%2e%2e', '%2E.', 'a%2Fb', 'a%5Cb', '%00', '%0a', '%ff', '%', '%E2%82', 'x'.repeat(3000), 'ro-fuzz', 'latest', 'search', 'null', '-1', '99999999999999999999') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s) || 'x') },
);
const restOfPath = fc.array(fc.oneof(pathId, fc.constantFrom('chat', 'completions', 'weights', 'sampler_weights', 'ttl')), { minLength: 1, maxLength: 4 }).map((a) => a.join('/'));

const QUERY_VALUES: Record<string, fc.Arbitrary<string>> = {
  int: fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('99999999999999999999', '-99999999999999999999', '9007199254740993', '1e400') },
    { weight: 2, arbitrary: fc.constantFrom('', '-1', '0', '1', '1e9', '1.5', 'abc', '%ff', '%207', '0x10') },
    { weight: 1, arbitrary: fc.integer().map(String) },
  ),
  bool: fc.constantFrom('true', 'false', '1', '0', 'maybe', '', 'TRUE', '%ff'),
  list: fc.constantFrom('queuing', 'running', 'succeeded', 'bogus', '', '%ff', 'x'.repeat(500)),
  string: fc.oneof(fc.string({ maxLength: 20 }).map(encodeURIComponent), fc.constantFrom('', '%ff', 'triplet', 'x'.repeat(2000))),
};

function queryOf(doc: RouteDoc): fc.Arbitrary<string> {
  const declared = Object.entries(doc.query ?? {}).map(([name, kind]) =>
    fc.option(fc.array(QUERY_VALUES[kind]!, { minLength: 1, maxLength: kind === 'list' ? 3 : 1 }).map((vs) => vs.map((v) => `${name}=${v}`).join('&')), { nil: undefined, freq: 3 }));
  const stray = fc.option(fc.constantFrom('limit=-1', 'offset=abc&limit=1e9', 'x=%ff', '%=%', 'a=1&a=2'), { nil: undefined, freq: 4 });
  return fc.tuple(fc.tuple(...declared), stray).map(([parts, extra]) => {
    const all = [...parts, extra].filter((p): p is string => p !== undefined);
    return all.length ? `?${all.join('&')}` : '';
  });
}

function pathOf(doc: RouteDoc): fc.Arbitrary<string> {
  const pieces = doc.path.split(/(\{\w+\*?\})/).filter(Boolean);
  return fc.tuple(...pieces.map((p) => (/^\{\w+\*\}$/.test(p) ? restOfPath : /^\{\w+\}$/.test(p) ? pathId : fc.constant(p)))).map((parts) => parts.join(''));
}

const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-1, 0, 1, 0.5, 1e308, -1e308, 2 ** 53 + 1, 99999999999999999999, '', '..', 'ro-x', 'latest', 'succeeded', null, true, [], {}, 'x'.repeat(6000)),
);

function bodyOf(fields: string[], example?: Record<string, unknown>): fc.Arbitrary<Buffer> {
  const shaped = fc.dictionary(fc.constantFrom(...fields), fc.oneof(hostileValue, fc.dictionary(fc.constantFrom(...fields), hostileValue, { maxKeys: 3 })), { maxKeys: 6 });
  // The route's own example, as it is or with one field changed or added: gets past its parser to what lies behind.
  const fromExample = example
    ? fc.oneof(fc.constant(example), fc.tuple(fc.constantFrom(...fields, 'stream', 'x'), hostileValue).map(([k, v]) => ({ ...example, [k]: v })))
    : shaped;
  // Every field at once holding one hostile value: whichever field a handler reads first meets it.
  const allAtOnce = fc.oneof({ weight: 3, arbitrary: fc.constant('x'.repeat(6000)) }, { weight: 5, arbitrary: fc.constantFrom(1e308, -1, 0.5, '', '..', null, {}, [], true) })
    .map((v) => Object.fromEntries(fields.map((f) => [f, v])));
  return fc.oneof(
    { weight: example ? 4 : 0, arbitrary: fromExample.map((o) => Buffer.from(JSON.stringify(o))) },
    { weight: 3, arbitrary: allAtOnce.map((o) => Buffer.from(JSON.stringify(o))) },
    { weight: 4, arbitrary: shaped.map((o) => Buffer.from(JSON.stringify(o))) },
    { weight: 1, arbitrary: fc.array(shaped, { maxLength: 3 }).map((o) => Buffer.from(JSON.stringify(o))) },
    { weight: 2, arbitrary: hostileJsonText.map((t) => Buffer.from(t)) },
    { weight: 1, arbitrary: fc.oneof(invalidUtf8, fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b))) },
  );
}

interface Service {
  name: string;
  base: string;
  routes: RouteDoc[];
  /** Field names for routes that declare none. */
  fields: string[];
  headers: fc.Arbitrary<Record<string, string>>;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Checks one answer: under 500, bounded, JSON errors without traces or paths. */
function checkAnswer(a: Answer, where: string): void {
  if (a.status >= 500 || a.status < 200) throw new Error(`${where}: HTTP ${a.status} ${a.text.slice(0, 300)}`);
  if (a.text.length > BODY_LIMIT) throw new Error(`${where}: a ${a.text.length}-byte answer`);
  if (a.status < 400) return;
  if (a.text.length > ERROR_BODY_LIMIT) throw new Error(`${where}: a ${a.text.length}-byte error: ${a.text.slice(0, 200)}`);
  if (String(a.headers['content-type'] ?? '').startsWith('application/x-protobuf') || a.text === '') return; // OTLP's binary status; HEAD
  jsonOf(a);
  if (/\n\s+at |traceback|\.ts:\d+/i.test(a.text)) throw new Error(`${where}: a stack trace in ${a.text.slice(0, 300)}`);
  if (a.text.includes(path.resolve(__dirname, '..', '..')) || a.text.includes(trainerDir)) throw new Error(`${where}: a path of this machine in ${a.text.slice(0, 300)}`);
}

async function fuzzService(s: Service): Promise<void> {
  for (const doc of s.routes) {
    const fields = doc.fields?.length ? doc.fields : s.fields;
    const method = fc.oneof({ weight: 9, arbitrary: fc.constant(doc.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) });
    const request = fc.tuple(method, pathOf(doc), queryOf(doc), bodyOf(fields, doc.example), s.headers, fc.constantFrom('application/json', 'application/json', 'application/json', 'text/plain', 'application/x-protobuf'));
    await fuzz(`${s.name} ${doc.method} ${doc.path}`, request, RUNS_PER_ROUTE, async ([m, p, q, body, headers, type]) => {
      const withBody = m !== 'GET' && m !== 'HEAD';
      const a = await send(s.base, m, `${p}${q}`, { ...headers, ...(withBody ? { 'content-type': type } : {}) }, withBody ? body : undefined);
      checkAnswer(a, `${s.name} ${m} ${p.slice(0, 120)}${q.slice(0, 80)} ${body.toString('utf8').slice(0, 160)}`);
    });
  }
}

/** The field names of every route that declares some: the dictionary for the routes that do not. */
const fieldsOf = (routes: RouteDoc[], extra: string[]) => [...new Set([...routes.flatMap((r) => r.fields ?? []), ...extra])];

test('every route of the store, the proxy and the trainer, from their route tables: no 5xx, no dropped connection, bounded answers, data intact', { timeout: 180_000 }, async () => {
  const t0 = Date.now();
  const storeBefore = JSON.stringify(await storeSnapshot());
  const weightsBefore = (await training.getInfo()).weightsHash;
  const policyBefore = (jsonOf(await send(proxy.proxy.url, 'GET', '/admin/policy', { authorization: `Bearer ${ADMIN}` })) as { policy: unknown }).policy;

  const services: Service[] = [
    {
      name: 'store', base: store.server.url, routes: store.server.routes,
      fields: fieldsOf(store.server.routes, ['rollout_id', 'state_in', 'event_type', 'data']),
      headers: fc.constantFrom<Record<string, string>>({}, { 'idempotency-key': 'k' }, { 'content-encoding': 'gzip' }, { 'x-api-key': 'nope' }),
    },
    {
      name: 'proxy', base: proxy.proxy.url, routes: proxy.proxy.routes,
      fields: ['model', 'messages', 'role', 'content', 'input', 'prompt', 'max_tokens', 'max_output_tokens', 'temperature', 'top_p', 'top_k', 'n', 'stop', 'stream', 'tools', 'tool_choice',
        'system', 'previous_response_id', 'switchId', 'modelName', 'samplerPath', 'baseModel', 'renderer', 'sampling', 'drain', 'retryAttempts', 'policyStep'],
      headers: fc.constantFrom<Record<string, string>>({}, { authorization: `Bearer ${ADMIN}` }, { 'x-rollout-id': '..', 'x-attempt-id': 'at-1' }, { 'x-rollout-id': 'ro-1', 'x-attempt-id': 'x'.repeat(300) }, { 'x-stainless-retry-count': '1' }),
    },
    {
      name: 'trainer', base: trainer.url, routes: trainer.routes,
      fields: ['session_id', 'model_id', 'base_model', 'lora_config', 'rank', 'seed', 'seq_id', 'model_seq_id', 'request_id', 'path', 'adam_params', 'learning_rate',
        'forward_backward_input', 'forward_input', 'data', 'loss_fn', 'loss_fn_config', 'model_input', 'chunks', 'tokens', 'loss_fn_inputs', 'target_tokens',
        'prompt', 'num_samples', 'sampling_params', 'max_tokens', 'temperature', 'sampling_session_id', 'sampling_session_seq_id', 'model_path', 'type', 'ttl_seconds', 'overwrite', 'optimizer', 'kind'],
      headers: fc.constantFrom<Record<string, string>>({}, { accept: 'application/x-protobuf' }, { 'content-encoding': 'zstd' }),
    },
  ];
  for (const s of services) {
    assert.ok(s.routes.length >= 10, `${s.name} lists ${s.routes.length} routes`);
    await fuzzService(s);
  }

  // Every route was sent to, and enough requests went out for CI.
  const { figures } = await import('./http-fuzz');
  const requests = figures.reduce((n, f) => n + f.runs, 0);
  const routes = services.reduce((n, s) => n + s.routes.length, 0);
  assert.equal(figures.length, routes);
  assert.ok(requests >= 2000, `${requests} requests`);
  process.stdout.write(`# routes fuzz: ${routes} routes, ${requests} requests in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

  // Healthy, and nothing stored before has changed.
  assert.equal((await send(store.server.url, 'GET', '/v1/agl/health', {})).status, 200);
  assert.equal((await send(store.server.url, 'GET', '/healthz', {})).status, 200);
  assert.equal((await send(proxy.proxy.url, 'GET', '/health', {})).status, 200);
  assert.equal((await send(trainer.url, 'GET', '/api/v1/healthz', {})).status, 200);
  assert.equal(JSON.stringify(await storeSnapshot()), storeBefore);
  assert.equal((await training.getInfo()).weightsHash, weightsBefore);
  const restored = await tinker.createTrainingClientFromState(savedPath);
  assert.equal((await restored.getInfo()).weightsHash, weightsBefore, 'the checkpoint saved before loads unchanged');
  // A random admin body that happened to be valid may have switched the policy: switch back, then a call is served.
  const back = await send(proxy.proxy.url, 'POST', '/admin/policy', { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, JSON.stringify({ ...(policyBefore as object), switchId: 'restored' }));
  assert.equal(back.status, 200, back.text);
  const ok = await send(proxy.proxy.url, 'POST', '/v1/chat/completions', { 'content-type': 'application/json' }, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }));
  assert.equal(ok.status, 200, ok.text);
});
