// Property-based fuzzing of the store's HTTP inputs: random JSON and field-shaped bodies on every route,
// random bytes (invalid UTF-8, wrong content types and encodings), hostile paths, raw request lines, random
// credentials and OTLP payloads. Every answer is below 500 and errors are JSON; afterwards the server still
// serves and what was stored before is unchanged. Bounded: a fixed number of runs per property.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestStore, type TestStore } from '../store/helpers';
import { checkAnswer, fuzz, headerValue, hostileJsonText, hostilePath, invalidUtf8, jsonOf, methods, report, send, sendRaw } from './http-fuzz';

const TOKEN = 'fuzz-store-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
let t: TestStore;
let base = '';
let snapshot: () => Promise<unknown>;

const POST_ROUTES = [
  '/queues/rollouts/enqueue', '/queues/rollouts/dequeue', '/rollouts', '/rollouts/search', '/rollouts/ro-fuzz', '/rollouts/ro-fuzz/attempts',
  '/rollouts/ro-fuzz/attempts/search', '/rollouts/ro-fuzz/attempts/at-fuzz', '/rollouts/ro-fuzz/attempts/latest', '/workers/search', '/workers/w-fuzz',
  '/resources', '/resources/rs-fuzz', '/spans', '/spans/search', '/spans/next', '/waits/rollouts',
].map((p) => `/v1/agl${p}`);

/** Objects built from the protocol's field names with random values: the shapes validation must reject. */
const FIELDS = [
  'input', 'mode', 'resources_id', 'config', 'metadata', 'rollouts', 'rollout_id', 'rollout_ids', 'attempt_id', 'worker_id', 'status',
  'status_in', 'limit', 'offset', 'sort_by', 'sort_order', 'timeout', 'resources', 'sequence_id', 'trace_id', 'span_id', 'parent_id', 'name',
  'attributes', 'events', 'links', 'start_time', 'end_time', 'context', 'parent', 'resource', 'heartbeat_stats', 'max_attempts',
  'timeout_seconds', 'retry_condition', 'last_heartbeat_time', 'filter_logic', 'idempotency_key', 'candidates',
];
const fieldValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-1, 0, 1e308, -1e308, 2 ** 53 + 1, 0.5, '', 'ro-x', 'latest', 'succeeded', 'bogus', null, true, [], {}),
  fc.string({ maxLength: 2000 }),
);
const fieldBody = fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }).map((o) => JSON.stringify(o));

before(async () => {
  t = await startTestStore({ token: TOKEN, bodyLimitBytes: 256 * 1024 });
  base = t.server.url;
  // Data stored before the fuzzing, which must come out of it unchanged.
  const attempted = await t.client.startRollout({ task: 'keep me' }, { workerId: 'w-keep', metadata: { keep: true } });
  const rid = attempted.rollout_id;
  const aid = attempted.attempt.attempt_id;
  const seq = await t.client.getNextSpanSequenceId(rid, aid);
  await t.client.addSpan({
    rollout_id: rid, attempt_id: aid, sequence_id: seq, trace_id: '0'.repeat(32), span_id: '1'.repeat(16), parent_id: null,
    name: 'agentlightning.annotation', status: { status_code: 'OK', description: null },
    attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 0.5 },
    events: [], links: [], start_time: 1, end_time: 2, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
  } as never);
  const res = await t.client.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9/v1', model: 'm', api_key: null, sampling_parameters: {} } });
  snapshot = async () => ({
    rollout: await t.client.getRolloutById(rid),
    attempts: await t.client.queryAttempts(rid),
    spans: await t.client.querySpans(rid, null),
    resources: await t.client.getResourcesById(res.resources_id),
  });
});

after(async () => {
  report('store');
  await t?.close();
});

test('store: hostile input never gets a 5xx, errors are JSON, stored data survives', { timeout: 120_000 }, async () => {
  const before = JSON.stringify(await snapshot());

  await fuzz('random JSON on every POST route', fc.tuple(fc.constantFrom(...POST_ROUTES), hostileJsonText), 400, async ([route, body]) => {
    checkAnswer(await send(base, 'POST', route, { ...AUTH, 'content-type': 'application/json' }, body), `POST ${route} ${body.slice(0, 200)}`);
  });

  await fuzz('protocol-shaped bodies with random values', fc.tuple(fc.constantFrom(...POST_ROUTES), fieldBody), 500, async ([route, body]) => {
    checkAnswer(await send(base, 'POST', route, { ...AUTH, 'content-type': 'application/json' }, body), `POST ${route} ${body.slice(0, 300)}`);
  });

  await fuzz(
    'random bytes, invalid UTF-8, content types and encodings',
    fc.tuple(fc.constantFrom(...POST_ROUTES, '/v1/traces'), fc.oneof(invalidUtf8, fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))), headerValue, headerValue),
    300,
    async ([route, body, type, encoding]) => {
      const a = await send(base, 'POST', route, { ...AUTH, 'content-type': type, 'content-encoding': encoding }, body);
      checkAnswer(a, `POST ${route} (${type}, ${encoding}) ${body.toString('hex').slice(0, 120)}`);
    },
  );

  await fuzz(
    'hostile paths and methods',
    fc.tuple(methods, hostilePath(['/v1/agl', '/v1/agl/rollouts', '/v1/agl/spans', '/v1/agl/resources', '/v1/agl/workers', '/v1/traces', '/', '//', '/v1'])),
    400,
    async ([method, path]) => {
      const a = await send(base, method, path, AUTH, method === 'POST' ? '{}' : undefined);
      if (method === 'HEAD') assert.ok(a.status < 500, `HEAD ${path}: ${a.status}`); // no body to be JSON
      else checkAnswer(a, `${method} ${path.slice(0, 200)}`);
    },
  );

  await fuzz(
    'raw request lines (targets node:http would not send)',
    fc.tuple(fc.constantFrom('GET', 'POST', 'BREW', 'G\x00T'), fc.uint8Array({ minLength: 1, maxLength: 60 })),
    150,
    async ([method, target]) => {
      const bytes = Buffer.concat([Buffer.from(`${method} /v1/agl/`), Buffer.from(target).filter((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d), Buffer.from(` HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}`)]);
      const a = await sendRaw(base, bytes);
      // Node's parser answers 400 itself for request lines it cannot parse; anything our code answers is JSON.
      if (a.status === 0 || a.status >= 500) throw new Error(`raw ${bytes.toString('latin1').slice(0, 120)} → ${a.status}`);
    },
  );

  await fuzz('random credentials', fc.oneof(headerValue, headerValue.map((v) => `Bearer ${v}`), fc.constant(`Bearer ${TOKEN}x`), fc.constant(`Bearer ${TOKEN.slice(0, -1)}`), fc.constant(TOKEN)), 200, async (auth) => {
    const a = await send(base, 'GET', '/v1/agl/rollouts', { authorization: auth });
    assert.equal(a.status, 401, `authorization ${JSON.stringify(auth)} must be refused`);
    assert.ok(jsonOf(a));
  });

  await fuzz(
    'OTLP payloads (protobuf bytes, JSON)',
    fc.oneof(
      fc.uint8Array({ maxLength: 400 }).map((b) => ['application/x-protobuf', Buffer.from(b)] as const),
      hostileJsonText.map((s) => ['application/json', Buffer.from(s)] as const),
      fc.jsonValue({ maxDepth: 5 }).map((v) => ['application/json', Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [v] }] }] }))] as const),
      fc.record({
        name: fieldValue, traceId: fieldValue, spanId: fieldValue, startTimeUnixNano: fieldValue, endTimeUnixNano: fieldValue,
        attributes: fc.array(fc.record({ key: fc.constantFrom('agentlightning.rollout_id', 'agentlightning.attempt_id', 'agentlightning.reward.0.value', 'x'), value: fc.oneof(fieldValue, fieldValue.map((v) => ({ stringValue: v })), fieldValue.map((v) => ({ doubleValue: v })), fieldValue.map((v) => ({ arrayValue: { values: [v] } }))) }), { maxLength: 4 }),
        events: fc.array(fieldValue, { maxLength: 2 }), status: fieldValue,
      }, { requiredKeys: [] }).map((span) => ['application/json', Buffer.from(JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 's' }, spans: [span] }] }] }))] as const),
    ),
    400,
    async ([type, body]) => {
      checkAnswer(await send(base, 'POST', '/v1/traces', { ...AUTH, 'content-type': type }, body), `OTLP ${type} ${body.toString('hex').slice(0, 120)}`);
    },
  );

  // Oversized bodies: 413 as JSON, declared or streamed (chunked); the kept-alive connection is closed after it,
  // so the client's next request is answered (it used to wait forever behind the unread rest of the body).
  for (const route of ['/v1/agl/rollouts/search', '/v1/traces']) {
    for (const chunked of [false, true, false, true]) {
      const big = Buffer.alloc(300 * 1024 + (chunked ? 70_000 : 0), 0x20);
      const headers: Record<string, string> = { ...AUTH, 'content-type': 'application/json', ...(chunked ? { 'transfer-encoding': 'chunked' } : {}) };
      const a = await send(base, 'POST', route, headers, big);
      assert.equal(a.status, 413);
      assert.ok(jsonOf(a));
      assert.equal((await send(base, 'GET', '/v1/agl/health', {})).status, 200);
    }
  }

  // Still serving, nothing stored before has changed.
  assert.equal(await t.client.health(), true);
  assert.equal(JSON.stringify(await snapshot()), before);
});
