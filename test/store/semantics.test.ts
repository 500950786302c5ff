// Store semantics of §3 through the HTTP API and the TS client: queue, attempts, status propagation,
// retries, watchdog on its own timer, spans and sequence ids, resources, workers, idempotent enqueue, long-poll.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AttemptedRollout, Span } from '../../store/types';
import { LLM_RESOURCES, sleep, startTestStore, type TestStore } from './helpers';

function span(rolloutId: string, attemptId: string, spanId: string, sequenceId: number, extra: Partial<Span> = {}): Span {
  return {
    rollout_id: rolloutId, attempt_id: attemptId, sequence_id: sequenceId, trace_id: 'a'.repeat(32), span_id: spanId,
    parent_id: null, name: 'test.span', status: { status_code: 'OK', description: null }, attributes: { k: 1 },
    events: [], links: [], start_time: 1, end_time: 2, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
    ...extra,
  };
}

describe('store semantics', () => {
  let t: TestStore;
  before(async () => { t = await startTestStore({ watchdogIntervalMs: 100 }); });
  after(async () => { await t.close(); });

  test('health, resources and latest resources', async () => {
    assert.equal(await t.client.health(), true);
    assert.equal(await t.client.getLatestResources(), null);
    const r1 = await t.client.addResources(LLM_RESOURCES);
    assert.match(r1.resources_id, /^rs-/);
    assert.equal(r1.version, 1);
    assert.equal((await t.client.getLatestResources())?.resources_id, r1.resources_id);
    const r2 = await t.client.updateResources(r1.resources_id, { ...LLM_RESOURCES, extra: { resource_type: 'llm', endpoint: 'e', model: 'm', api_key: null, sampling_parameters: {} } });
    assert.equal(r2.version, 2);
    assert.equal((await t.client.getResourcesById('rs-unknown')), null);
    const listed = await t.client.queryResources();
    assert.equal(listed.total, 1);
  });

  test('enqueue binds latest resources; FIFO dequeue creates attempts; success propagates', async () => {
    const latest = await t.client.getLatestResources();
    const a = await t.client.enqueueRollout('a', { mode: 'train' });
    const b = await t.client.enqueueRollout({ q: 'b' }, { mode: 'val' });
    assert.equal(a.status, 'queuing');
    assert.equal(a.resources_id, latest?.resources_id);
    assert.equal('attempt' in a, false);
    const first = (await t.client.dequeueRollout('w-1')) as AttemptedRollout;
    assert.equal(first.rollout_id, a.rollout_id);
    assert.equal(first.status, 'preparing');
    assert.equal(first.attempt.sequence_id, 1);
    assert.equal(first.attempt.worker_id, 'w-1');
    assert.equal((await t.client.getWorkerById('w-1'))?.status, 'busy');
    const second = (await t.client.dequeueRollout('w-2'))!;
    assert.equal(second.rollout_id, b.rollout_id);
    assert.equal(await t.client.dequeueRollout('w-3'), null);
    assert.equal((await t.client.getWorkerById('w-3'))?.status, 'idle');

    await t.client.updateAttempt(a.rollout_id, first.attempt.attempt_id, { status: 'running' });
    assert.equal((await t.client.getRolloutById(a.rollout_id))?.status, 'running');
    const done = await t.client.updateAttempt(a.rollout_id, 'latest', { status: 'succeeded' });
    assert.ok(done.end_time !== null);
    const r = await t.client.getRolloutById(a.rollout_id);
    assert.equal(r?.status, 'succeeded');
    assert.ok(r?.end_time);
    assert.equal((await t.client.getWorkerById('w-1'))?.status, 'idle');
  });

  test('failed attempt is retried up to max_attempts when its status is in retry_condition', async () => {
    const r = await t.client.enqueueRollout('retry-me', { config: { max_attempts: 2, retry_condition: ['failed'] } });
    const a1 = (await t.client.dequeueRollout('w'))!;
    assert.equal(a1.rollout_id, r.rollout_id);
    await t.client.updateAttempt(r.rollout_id, a1.attempt.attempt_id, { status: 'failed' });
    assert.equal((await t.client.getRolloutById(r.rollout_id))?.status, 'requeuing');
    // Other runners (w-1, w-2, w-3) polled lately and are free: the retry goes to a runner that has not tried it.
    assert.equal(await t.client.dequeueRollout('w'), null, 'a retry is left for a free runner that has not tried it');
    const a2 = (await t.client.dequeueRollout('w-retry'))!;
    assert.equal(a2.rollout_id, r.rollout_id);
    assert.equal(a2.attempt.sequence_id, 2);
    await t.client.updateAttempt(r.rollout_id, a2.attempt.attempt_id, { status: 'failed' });
    const final = await t.client.getRolloutById(r.rollout_id);
    assert.equal(final?.status, 'failed');
    assert.equal((await t.client.queryAttempts(r.rollout_id)).total, 2);
    // A finished rollout is not revived by a late report of an old attempt.
    await t.client.updateAttempt(r.rollout_id, a1.attempt.attempt_id, { status: 'succeeded' });
    assert.equal((await t.client.getRolloutById(r.rollout_id))?.status, 'failed');
  });

  test('watchdog marks timeouts and silent attempts on its own timer', async () => {
    const timeout = await t.client.enqueueRollout('slow', { config: { timeout_seconds: 0.2, max_attempts: 2, retry_condition: ['timeout'] } });
    const silent = await t.client.enqueueRollout('silent', { config: { unresponsive_seconds: 0.2 } });
    const ta = (await t.client.dequeueRollout('w-timeout'))!;
    const sa = (await t.client.dequeueRollout('w-silent'))!;
    assert.equal(ta.rollout_id, timeout.rollout_id);
    assert.equal(sa.rollout_id, silent.rollout_id);
    // Only reads are made while the watchdog works (reads never trigger a scan): its own timer must act.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (await t.client.getLatestAttempt(silent.rollout_id))?.status !== 'unresponsive') await sleep(100);
    const latestTimeout = await t.client.getLatestAttempt(timeout.rollout_id);
    assert.equal(latestTimeout?.status, 'timeout');
    assert.equal(latestTimeout?.end_time, null);
    assert.equal((await t.client.getRolloutById(timeout.rollout_id))?.status, 'requeuing');
    assert.equal((await t.client.getLatestAttempt(silent.rollout_id))?.status, 'unresponsive');
    assert.equal((await t.client.getRolloutById(silent.rollout_id))?.status, 'failed');
    assert.equal((await t.client.getWorkerById('w-silent'))?.status, 'unknown');
    const retry = (await t.client.dequeueRollout('w'))!;
    assert.equal(retry.rollout_id, timeout.rollout_id);
    assert.equal(retry.attempt.sequence_id, 2);
    await t.client.updateAttempt(retry.rollout_id, 'latest', { status: 'succeeded' });
  });

  test('spans: per-rollout sequence ids, de-dup, heartbeat side effects, latest-attempt query', async () => {
    const r = await t.client.enqueueRollout('spans', { config: { max_attempts: 3, retry_condition: ['failed'] } });
    const a = (await t.client.dequeueRollout('w'))!;
    assert.equal(await t.client.getNextSpanSequenceId(r.rollout_id, a.attempt.attempt_id), 1);
    assert.equal(await t.client.getNextSpanSequenceId(r.rollout_id, a.attempt.attempt_id), 2);
    const added = await t.client.addSpan(span(r.rollout_id, a.attempt.attempt_id, '1'.repeat(16), 5));
    assert.equal(added?.sequence_id, 5);
    assert.equal(await t.client.addSpan(span(r.rollout_id, a.attempt.attempt_id, '1'.repeat(16), 5)), null, 'duplicate span id → null');
    assert.equal(await t.client.getNextSpanSequenceId(r.rollout_id, a.attempt.attempt_id), 6, 'explicit id raised the counter');
    const attempt = await t.client.getLatestAttempt(r.rollout_id);
    assert.equal(attempt?.status, 'running');
    assert.ok(attempt?.last_heartbeat_time);
    assert.equal((await t.client.getRolloutById(r.rollout_id))?.status, 'running');

    await t.client.updateAttempt(r.rollout_id, 'latest', { status: 'failed' });
    const a2 = (await t.client.dequeueRollout('w-spans-retry'))!;
    await t.client.addSpan(span(r.rollout_id, a2.attempt.attempt_id, '2'.repeat(16), 7, { name: 'second' }));
    await t.client.addSpan(span(r.rollout_id, a2.attempt.attempt_id, '3'.repeat(16), 3, { name: 'first', parent_id: '2'.repeat(16) }));
    const latest = await t.client.querySpans(r.rollout_id, 'latest');
    assert.deepEqual(latest.items.map((s) => s.name), ['first', 'second']);
    assert.equal(latest.total, 2);
    assert.equal((await t.client.querySpans(r.rollout_id, null)).total, 3);
    assert.equal((await t.client.querySpans(r.rollout_id, null, { name_contains: 'sec' })).total, 1);
    const desc = await t.client.querySpans(r.rollout_id, null, { sort_order: 'desc', limit: 1 });
    assert.equal(desc.items[0]?.sequence_id, 7);
    assert.equal(desc.total, 3);
    assert.deepEqual((await t.client.querySpans('ro-none', 'latest')).items, []);
    await assert.rejects(t.client.addSpan(span('ro-none', 'at-none', '4'.repeat(16), 1)), /HTTP 404/);
  });

  test('idempotent enqueue by header key and by metadata key', async () => {
    const x = await t.client.enqueueRollout('idem', { idempotencyKey: 'run1/batch0/0' });
    const y = await t.client.enqueueRollout('idem', { idempotencyKey: 'run1/batch0/0' });
    assert.equal(y.rollout_id, x.rollout_id);
    const z = await t.client.enqueueRollout('idem', { idempotencyKey: 'run1/batch0/1' });
    assert.notEqual(z.rollout_id, x.rollout_id);
    const many1 = await t.client.enqueueRollouts([
      { input: 1, metadata: { idempotency_key: 'm-1' } }, { input: 2, metadata: { idempotency_key: 'm-2' } },
    ]);
    const many2 = await t.client.enqueueRollouts([
      { input: 1, metadata: { idempotency_key: 'm-1' } }, { input: 2, metadata: { idempotency_key: 'm-2' } },
    ]);
    assert.deepEqual(many2.map((r) => r.rollout_id), many1.map((r) => r.rollout_id));
    const found = await t.client.queryRollouts({ rollout_id_in: [x.rollout_id, z.rollout_id, ...many1.map((r) => r.rollout_id)] });
    assert.equal(found.total, 4);
    // Drain them so later tests see an empty queue.
    for (let i = 0; i < 4; i++) {
      const d = (await t.client.dequeueRollout('drain'))!;
      await t.client.updateAttempt(d.rollout_id, 'latest', { status: 'succeeded' });
    }
    assert.equal(await t.client.dequeueRollout('drain'), null);
  });

  test('long-poll wait answers as soon as the rollouts finish, and at its timeout otherwise', async () => {
    const r1 = await t.client.enqueueRollout('wait-1');
    const r2 = await t.client.enqueueRollout('wait-2');
    const started = Date.now();
    const waiting = t.client.waitForRollouts([r1.rollout_id, r2.rollout_id, 'ro-unknown'], 20);
    await sleep(200);
    for (let i = 0; i < 2; i++) {
      const d = (await t.client.dequeueRollout('w'))!;
      await t.client.updateAttempt(d.rollout_id, 'latest', { status: i === 0 ? 'succeeded' : 'failed' });
    }
    const finished = await waiting;
    const elapsed = Date.now() - started;
    assert.deepEqual(finished.map((r) => r.rollout_id), [r1.rollout_id, r2.rollout_id]);
    assert.ok(elapsed < 15_000, `wait answered after ${elapsed} ms, before its 20 s timeout`);
    const r3 = await t.client.enqueueRollout('never');
    const t0 = Date.now();
    assert.deepEqual(await t.client.waitForRollouts([r3.rollout_id], 0.3), []);
    assert.ok(Date.now() - t0 >= 250);
    await t.client.updateRollout(r3.rollout_id, { status: 'cancelled' });
    assert.equal((await t.client.waitForRollouts([r3.rollout_id], 0))[0]?.status, 'cancelled');
    assert.equal(await t.client.dequeueRollout('w'), null, 'cancelled rollouts are skipped by dequeue');
  });

  test('start_rollout, start_attempt, update_rollout and queries', async () => {
    const started = await t.client.startRollout({ x: 1 }, { workerId: 'w-start', mode: 'test' });
    assert.equal(started.status, 'preparing');
    assert.equal(started.attempt.sequence_id, 1);
    const again = await t.client.startAttempt(started.rollout_id, 'w-start');
    assert.equal(again.attempt.sequence_id, 2);
    const updated = await t.client.updateRollout(started.rollout_id, { metadata: { note: 'n' }, status: 'succeeded' });
    assert.equal(updated.status, 'succeeded');
    assert.deepEqual(updated.metadata, { note: 'n' });
    const succeeded = await t.client.queryRollouts({ status_in: ['succeeded'], sort_by: 'start_time', sort_order: 'desc', limit: 2 });
    assert.equal(succeeded.items.length, 2);
    assert.ok(succeeded.total >= 3);
    assert.equal(succeeded.items[0]?.rollout_id, started.rollout_id);
    const workers = await t.client.queryWorkers({ worker_id_contains: 'w-' });
    assert.ok(workers.total >= 3);
    const hb = await t.client.updateWorker('w-heartbeat', { cpu: 1 });
    assert.deepEqual(hb.heartbeat_stats, { cpu: 1 });
    assert.ok(hb.last_heartbeat_time);
    const stats = await t.client.statistics();
    assert.ok(stats.total_rollouts > 5 && stats.total_spans >= 3);
  });
});
