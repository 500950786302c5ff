// Bad input is answered with the status and message Python clients expect (§4.2, §10), and the server keeps
// serving with nothing stored lost.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StoreClient } from '../../store/client';
import { postRaw, startTestStore, type TestStore } from './helpers';

describe('bad input', () => {
  let t: TestStore;
  let api: string;
  before(async () => {
    t = await startTestStore({ bodyLimitBytes: 64 * 1024 });
    api = `${t.server.url}/v1/agl`;
  });
  after(async () => { await t.close(); });

  test('malformed JSON and wrong types → 422 with FastAPI-style detail', async () => {
    const bad = await postRaw(`${api}/queues/rollouts/enqueue`, '{"rollouts": [');
    assert.equal(bad.status, 422);
    assert.equal(JSON.parse(bad.text).detail[0].type, 'json_invalid');
    const wrong = await postRaw(`${api}/queues/rollouts/enqueue`, JSON.stringify({ rollouts: [{ input: 1, config: { max_attempts: 0 } }] }));
    assert.equal(wrong.status, 422);
    assert.deepEqual(JSON.parse(wrong.text).detail[0].loc, ['body', 'rollouts', 0, 'config', 'max_attempts']);
    const missing = await postRaw(`${api}/queues/rollouts/enqueue`, JSON.stringify({}));
    assert.equal(missing.status, 422);
    const badStatus = await postRaw(`${api}/rollouts/ro-x/attempts/latest`, JSON.stringify({ status: 'done' }));
    assert.equal(badStatus.status, 422);
  });

  test('unknown ids: lookups answer 200 null, mutations 404 with a message', async () => {
    for (const path of ['/rollouts/ro-nope', '/rollouts/ro-nope/attempts/latest', '/resources/rs-nope', '/workers/nobody']) {
      const res = await fetch(`${api}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(await res.text(), 'null', path);
    }
    const upd = await postRaw(`${api}/rollouts/ro-nope/attempts/latest`, JSON.stringify({ status: 'succeeded' }));
    assert.equal(upd.status, 404);
    assert.match(JSON.parse(upd.text).detail, /Rollout ro-nope not found/);
    assert.equal((await postRaw(`${api}/rollouts/ro-nope/attempts`, 'null')).status, 404);
    assert.equal((await fetch(`${api}/no/such/route`)).status, 404);
  });

  test('explicit null for a non-nullable field and bad pagination → 400', async () => {
    const r = await t.client.enqueueRollout('n');
    const res = await postRaw(`${api}/rollouts/${r.rollout_id}`, JSON.stringify({ status: null }));
    assert.equal(res.status, 400);
    assert.equal(JSON.parse(res.text).detail, 'status is invalid; it cannot be a null value.');
    const page = await postRaw(`${api}/rollouts/search`, JSON.stringify({ limit: 0 }));
    assert.equal(page.status, 400);
    const sort = await postRaw(`${api}/rollouts/search`, JSON.stringify({ sort_by: 'nope' }));
    assert.equal(sort.status, 400);
    assert.match(JSON.parse(sort.text).detail, /Invalid sort_by: nope/);
  });

  test('oversized bodies → 413; the server keeps serving', async () => {
    const big = JSON.stringify({ rollouts: [{ input: 'x'.repeat(100 * 1024) }] });
    const res = await postRaw(`${api}/queues/rollouts/enqueue`, big);
    assert.equal(res.status, 413);
    assert.match(JSON.parse(res.text).detail, /too large/);
    assert.equal(await t.client.health(), true);
  });

  test('NaN rewards are rejected; NaN in free-form dicts (Python json.dumps) is tolerated', async () => {
    const a = await t.client.startRollout('nan', { workerId: 'w' });
    const r = a;
    const span = {
      rollout_id: r.rollout_id, attempt_id: a.attempt.attempt_id, sequence_id: 1, trace_id: '0'.repeat(32), span_id: '1'.repeat(16),
      parent_id: null, name: 'agentlightning.annotation', status: { status_code: 'OK', description: null },
      attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': '__NAN__' },
      events: [], links: [], start_time: 1, end_time: 1, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
    };
    const res = await postRaw(`${api}/spans`, JSON.stringify(span).replace('"__NAN__"', 'NaN'));
    assert.equal(res.status, 422);
    assert.match(res.text, /must be a finite number/);
    assert.equal((await t.client.querySpans(r.rollout_id, 'latest')).total, 0);
    const hb = await postRaw(`${api}/workers/w-nan`, '{"heartbeat_stats": {"gpu_util": NaN, "mem": Infinity, "s": "NaN ok"}}');
    assert.equal(hb.status, 200);
    assert.deepEqual(JSON.parse(hb.text).heartbeat_stats, { gpu_util: null, mem: null, s: 'NaN ok' });
  });

  test('a finite reward too large to train on (1e308, in any reward format) is refused with the reason; ±1e12 is kept', async () => {
    const a = await t.client.startRollout('huge', { workerId: 'w' });
    const span = (spanId: string, name: string, attributes: Record<string, unknown>) => ({
      rollout_id: a.rollout_id, attempt_id: a.attempt.attempt_id, sequence_id: 1, trace_id: '0'.repeat(32), span_id: spanId,
      parent_id: null, name, status: { status_code: 'OK', description: null }, attributes,
      events: [], links: [], start_time: 1, end_time: 1, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
    });
    const refused = [
      span('a'.repeat(16), 'agentlightning.annotation', { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 1e308 }),
      span('b'.repeat(16), 'agentlightning.annotation', { reward: -3.5e38 }),
      span('c'.repeat(16), 'x', { 'agentops.task.output': JSON.stringify({ type: 'reward', value: 1e13 }) }),
    ];
    for (const s of refused) {
      const res = await postRaw(`${api}/spans`, JSON.stringify(s));
      assert.equal(res.status, 422, JSON.stringify(s.attributes));
      assert.match(res.text, /beyond ±1000000000000/);
    }
    assert.equal((await t.client.querySpans(a.rollout_id, 'latest')).total, 0, 'nothing stored');
    const kept = await postRaw(`${api}/spans`, JSON.stringify(span('d'.repeat(16), 'agentlightning.annotation', { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': -1e12 })));
    assert.equal(kept.status, 201);
  });

  test('spans for unknown rollouts → 404, nothing stored; earlier data intact', async () => {
    const before = await t.client.statistics();
    const res = await postRaw(`${api}/spans`, JSON.stringify({
      rollout_id: 'ro-ghost', attempt_id: 'at-ghost', sequence_id: 1, trace_id: '0'.repeat(32), span_id: '2'.repeat(16), parent_id: null,
      name: 'x', start_time: null, end_time: null, context: null, parent: null,
    }));
    assert.equal(res.status, 404);
    const afterStats = await t.client.statistics();
    assert.equal(afterStats.total_spans, before.total_spans);
    assert.equal(afterStats.total_rollouts, before.total_rollouts);
  });

  test('bearer token, when configured, is required (health stays open)', async () => {
    const secured = await startTestStore({ token: 'sekret' });
    try {
      const anon = new StoreClient(secured.server.url, { token: '', retryDelaysMs: [] });
      await assert.rejects(anon.getLatestResources(), /HTTP 401/);
      assert.equal(await anon.health(), true);
      const authed = new StoreClient(secured.server.url, { token: 'sekret' });
      assert.equal(await authed.getLatestResources(), null);
    } finally {
      await secured.close();
    }
  });
});
