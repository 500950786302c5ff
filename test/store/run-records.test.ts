// The store's run records over HTTP (store/run-records.ts): the first write of a key stands and is what every later
// write of it gets back; reads by kind and seq; bad input gets a clear error; the token is required like anywhere.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreClient, StoreHttpError } from '../../store/client';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStoreDatabase } from '../../store/db';
import { LightningStore } from '../../store/lightning-store';
import { postRaw, startTestStore, type TestStore } from './helpers';

let store: TestStore;
before(async () => {
  store = await startTestStore({ token: 'records-token' });
});
after(async () => {
  await store.close();
});

test('a record key is written once; records come back by kind and seq', async () => {
  const c = new StoreClient(store.server.url, { token: 'records-token', retryDelaysMs: [] });
  const [first] = await c.putRunRecords('r@1', [{ kind: 'step', step: 1, key: 'tinker://m/weights/0', body: '{"a": 1}' }]);
  const [again] = await c.putRunRecords('r@1', [{ kind: 'step', step: 1, key: 'tinker://m/weights/0', body: '{"a": 2}' }]);
  assert.deepEqual(again, first, 'the second write of the key gets the first record');
  assert.equal(first!.body, '{"a": 1}');
  await c.putRunRecords('r@1', [
    { kind: 'metrics', step: 0, body: '{"step": 0, "x": NaN}' },
    { kind: 'trace', step: 0, key: 'k', body: '{}' },
    { kind: 'metrics', step: 1, body: '{"step": 1}' },
  ]);
  await c.putRunRecords('r@2', [{ kind: 'metrics', step: 0, body: '{"step": 0, "other": 1}' }]);
  const metrics = await c.runRecords('r@1', { kind: 'metrics' });
  assert.deepEqual(metrics.map((r) => r.body), ['{"step": 0, "x": NaN}', '{"step": 1}'], 'bodies as written; another run\'s not among them');
  assert.deepEqual((await c.runRecords('r@1', { kinds: ['metrics', 'trace'], after_seq: metrics[0]!.seq })).map((r) => r.kind), ['trace', 'metrics']);
  const runs = await c.runsWithRecords();
  assert.deepEqual(runs.filter((r) => r.run === 'r@1').map((r) => [r.kind, r.count]), [['metrics', 2], ['step', 1], ['trace', 1]]);
});

test('bad input is answered with what is wrong; no token, no records', async () => {
  const c = new StoreClient(store.server.url, { token: 'records-token', retryDelaysMs: [] });
  await assert.rejects(c.putRunRecords('r', [{ kind: 'nope' as 'step', step: 0, body: '' }]), (e: StoreHttpError) => e.status === 422 && /"kind".*expected one of/.test(e.message));
  await assert.rejects(c.putRunRecords('r', [{ kind: 'step', step: -1, body: '' }]), (e: StoreHttpError) => e.status === 422 && /"step".*>=0/.test(e.message));
  await assert.rejects(c.runRecords('r', {}), (e: StoreHttpError) => e.status === 400 && /name a kind/.test(e.message));
  await assert.rejects(c.runRecords('r', { kinds: ['step', 'metrics'] }), (e: StoreHttpError) => e.status === 400 && /kind 'step' is queried on its own/.test(e.message));
  const res = await postRaw(`${store.server.url}/v1/agl/runs/r/records/search`, JSON.stringify({ kind: 'step' }));
  assert.equal(res.status, 401);
});

test("a database made when step records shared run_records moves them to their own table, readable as before", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-steprec-'));
  try {
    const file = path.join(dir, 'store.sqlite');
    openStoreDatabase(file).close();
    // The old shape: step records in run_records, between metrics rows.
    const old = new Database(file);
    const put = old.prepare('INSERT INTO run_records (run, kind, step, key, body, create_time) VALUES (?, ?, ?, ?, ?, 0)');
    for (let s = 0; s < 3; s++) {
      put.run('m@1', 'step', s, `tinker://m/weights/${s}`, `{"s": ${s}}`);
      put.run('m@1', 'metrics', s, '', `{"step": ${s}}`);
    }
    old.close();
    const store = new LightningStore(openStoreDatabase(file));
    assert.deepEqual(store.queryRunRecords('m@1', { kind: 'step' }).map((r) => [r.kind, r.step, r.key, r.body]),
      [0, 1, 2].map((s) => ['step', s, `tinker://m/weights/${s}`, `{"s": ${s}}`]));
    assert.equal(store.queryRunRecords('m@1', { kind: 'metrics' }).length, 3, 'metrics stay where they were');
    const [again] = store.putRunRecords('m@1', [{ kind: 'step', step: 1, key: 'tinker://m/weights/1', body: '{"s": "new"}' }]);
    assert.equal(again!.body, '{"s": 1}', 'a moved record still stands for its key');
    const raw = new Database(file, { readonly: true });
    assert.equal((raw.prepare("SELECT COUNT(*) AS n FROM run_records WHERE kind = 'step'").get() as { n: number }).n, 0, 'none left behind');
    raw.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
