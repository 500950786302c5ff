// Our two look-ups beyond the v0.3 protocol: call records (how often an attempt made one call, and its latest
// answer, from an index) and rollouts by idempotency-key prefix; and the one-time fill of call keys in a database
// made before they existed.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStoreDatabase } from '../../store/db';
import { LightningStore } from '../../store/lightning-store';
import { CALL_KEY_ATTR, type CallRecord, type Span } from '../../store/types';
import { fetchJson } from '../../common/http';
import { startTestStore, type TestStore } from './helpers';

let s: TestStore;
before(async () => { s = await startTestStore(); });
after(() => s.close());

function span(rid: string, aid: string, seq: number, key: string | null, status: 'OK' | 'ERROR' = 'OK'): Span {
  return {
    rollout_id: rid, attempt_id: aid, sequence_id: seq, trace_id: 't'.repeat(32), span_id: `s${seq}`.padEnd(16, '0'), parent_id: null,
    name: 'call', status: { status_code: status, description: null }, attributes: key === null ? {} : { [CALL_KEY_ATTR]: key },
    events: [], links: [], start_time: seq, end_time: seq, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
  } as unknown as Span;
}

const calls = (body: object) => fetchJson<CallRecord>(`${s.server.url}/v1/agl/spans/calls`, { body });

test('call records count the answered calls of one attempt with one key; with_last returns the latest', async () => {
  const r = await s.client.startRollout({ t: 1 });
  const rid = r.rollout_id;
  const aid = r.attempt.attempt_id;
  for (const [seq, key, status] of [[1, 'a', 'OK'], [2, 'b', 'OK'], [3, 'a', 'ERROR'], [4, 'a', 'OK'], [5, null, 'OK']] as const) {
    await s.client.addSpan(span(rid, aid, seq, key, status));
  }
  const other = await s.client.startAttempt(rid);
  await s.client.addSpan(span(rid, other.attempt.attempt_id, 6, 'a'));

  assert.deepEqual(await calls({ rollout_id: rid, attempt_id: aid, call_key: 'a' }), { answered: 2, last: null });
  const a = await calls({ rollout_id: rid, attempt_id: aid, call_key: 'a', with_last: true });
  assert.equal(a.answered, 2);
  assert.equal(a.last?.sequence_id, 4, 'the latest answered one; the error span does not count');
  assert.deepEqual(await calls({ rollout_id: rid, attempt_id: aid, call_key: 'zzz', with_last: true }), { answered: 0, last: null });
  assert.equal((await calls({ rollout_id: rid, attempt_id: other.attempt.attempt_id, call_key: 'a' })).answered, 1, 'per attempt');
  await assert.rejects(calls({ rollout_id: rid, attempt_id: aid }), /422/);
});

test('rollouts by idempotency-key prefix: exactly the keys that start with it, with other filters ANDed', async () => {
  for (const key of ['run@1/train/1/0/0', 'run@1/train/1/0/1', 'run@1/train/10/0/0', 'run@1/train/2/0/0', 'run@2/train/1/0/0']) {
    await s.client.enqueueRollout({ key }, { idempotencyKey: key });
  }
  const keys = async (q: object) => (await s.client.queryRollouts(q)).items.map((r) => r.metadata?.idempotency_key).sort();
  assert.deepEqual(await keys({ idempotency_key_prefix: 'run@1/train/1/' }), ['run@1/train/1/0/0', 'run@1/train/1/0/1']);
  assert.deepEqual(await keys({ idempotency_key_prefix: 'run@1/train/1' }), ['run@1/train/1/0/0', 'run@1/train/1/0/1', 'run@1/train/10/0/0']);
  assert.deepEqual(await keys({ idempotency_key_prefix: 'run@1/train/1/', status_in: ['succeeded'] }), []);
  const page = await s.client.queryRollouts({ idempotency_key_prefix: 'run@1/', limit: 2, offset: 2 });
  assert.equal(page.total, 4);
  assert.equal(page.items.length, 2);
});

test('a database made before call keys existed gets them filled from the stored spans', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-callkey-'));
  try {
    const file = path.join(dir, 'store.sqlite');
    const store = new LightningStore(openStoreDatabase(file));
    const r = store.startRollout({ input: 1 } as never);
    const aid = r.attempt.attempt_id;
    store.addSpans([span(r.rollout_id, aid, 1, 'k'), span(r.rollout_id, aid, 2, 'k', 'ERROR'), span(r.rollout_id, aid, 3, 'k')]);
    // Back to the old shape: no call_key column, no index.
    const old = new Database(file);
    old.exec('DROP INDEX spans_by_call; ALTER TABLE spans DROP COLUMN call_key;');
    old.close();
    const reopened = new LightningStore(openStoreDatabase(file));
    const record = reopened.callRecord(r.rollout_id, aid, 'k', true);
    assert.equal(record.answered, 2);
    assert.equal(record.last?.sequence_id, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
