// A rollout's revision (ours): raised by every change of its status (but into running: an attempt at work) or of
// what its attempts share (resources, metadata, ...), left alone by span counters; GET /rollouts/{id} names it in x-agl-rollout-revision, and
// POST /spans with x-agl-if-rollout-revision stores the span only while the rollout is still at that revision
// (412 otherwise, nothing stored), answering with the revision after the write. What the proxy's cache of a
// rollout rests on (proxy/rollout-seed.ts): it never stores a span planned from a rollout that has changed since.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openStoreDatabase } from '../../store/db';
import { IF_REVISION_HEADER, REVISION_HEADER, type Span } from '../../store/types';
import { startTestStore, type TestStore } from './helpers';

let s: TestStore;
before(async () => { s = await startTestStore(); });
after(() => s.close());

function span(rid: string, aid: string, id: string): Span {
  return {
    rollout_id: rid, attempt_id: aid, sequence_id: -1, trace_id: 't'.repeat(32), span_id: id.padEnd(16, '0'), parent_id: null,
    name: 'call', status: { status_code: 'OK', description: null }, attributes: {}, events: [], links: [], start_time: 1, end_time: 2,
    context: null, parent: null, resource: { attributes: {}, schema_url: '' },
  } as unknown as Span;
}

async function revisionOf(rid: string): Promise<number> {
  const res = await fetch(`${s.server.url}/v1/agl/rollouts/${rid}`);
  assert.equal(res.status, 200);
  return Number(res.headers.get(REVISION_HEADER));
}

async function write(body: Span, revision?: number): Promise<{ status: number; json: any; revision: number | null }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (revision !== undefined) headers[IF_REVISION_HEADER] = String(revision);
  const res = await fetch(`${s.server.url}/v1/agl/spans`, { method: 'POST', headers, body: JSON.stringify(body) });
  const r = res.headers.get(REVISION_HEADER);
  return { status: res.status, json: await res.json(), revision: r === null ? null : Number(r) };
}

test('a conditional span write is stored at the revision read, refused once the rollout changed, and never refused for a span already held', async () => {
  const r = await s.client.startRollout({ t: 1 });
  const rid = r.rollout_id;
  const aid = r.attempt.attempt_id;
  const r0 = await revisionOf(rid);

  // Accepted; its heartbeat moves the rollout preparing -> running, which the revision does not count (the attempt
  // at work: a twin call planned beside this one is not refused for it). The answer names the revision after.
  const first = await write(span(rid, aid, 'a1'), r0);
  assert.equal(first.status, 201);
  assert.equal(first.json.sequence_id, 1, 'numbered by the store');
  assert.equal((await s.client.getRolloutById(rid))!.status, 'running');
  assert.equal(first.revision, r0);
  const twin = await write(span(rid, aid, 'a0'), r0);
  assert.deepEqual([twin.status, twin.json.sequence_id], [201, 2], 'a twin planned at the same revision');

  // The rollout changes: a write at the revision it left is refused, nothing stored, the span counter untouched.
  await s.client.updateRollout(rid, { metadata: { note: 'changed' } });
  assert.equal(await revisionOf(rid), r0 + 1);
  const stale = await write(span(rid, aid, 'a2'), r0);
  assert.equal(stale.status, 412, JSON.stringify(stale.json));
  assert.match(stale.json.detail, /revision/);
  // A retry of the first write (its answer lost) is answered as held, whatever revision it names.
  const again = await write(span(rid, aid, 'a1'), r0);
  assert.deepEqual([again.status, again.json], [201, null]);
  // At the revision now: stored, and numbered 3 (the refused write took no number).
  const second = await write(span(rid, aid, 'a2'), r0 + 1);
  assert.deepEqual([second.status, second.json.sequence_id, second.revision], [201, 3, r0 + 1]);
  assert.deepEqual((await s.client.querySpans(rid, aid)).items.map((x) => x.span_id.slice(0, 2)), ['a1', 'a0', 'a2']);
  // Without the header the write is Agent-lightning's, unconditional.
  assert.equal((await write(span(rid, aid, 'a3'))).status, 201);
  // A revision that is not a number: 400.
  const res = await fetch(`${s.server.url}/v1/agl/spans`, { method: 'POST', headers: { 'content-type': 'application/json', [IF_REVISION_HEADER]: 'abc' }, body: JSON.stringify(span(rid, aid, 'a4')) });
  assert.equal(res.status, 400);
});

test('the revision rises with every change of status or of what attempts share, and with nothing else', async () => {
  const r = await s.client.startRollout({ t: 2 }, { metadata: { sampling_seed: 1 } });
  const rid = r.rollout_id;
  let rev = await revisionOf(rid);
  const expect = async (raised: boolean, what: string) => {
    const now = await revisionOf(rid);
    assert.equal(now, raised ? rev + 1 : rev, what);
    rev = now;
  };
  await s.client.getNextSpanSequenceId(rid, r.attempt.attempt_id);
  await expect(false, 'a span sequence id');
  await s.client.updateRollout(rid, { metadata: { sampling_seed: 1 } });
  await expect(false, 'an update that changes nothing');
  await s.client.updateRollout(rid, { metadata: { sampling_seed: 2 } });
  await expect(true, 'new metadata');
  const res = await s.client.addResources({ main_llm: { resource_type: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'm', sampling_parameters: {} } } as never);
  await s.client.updateRollout(rid, { resources_id: res.resources_id });
  await expect(true, 'other resources');
  await s.client.updateAttempt(rid, r.attempt.attempt_id, { status: 'failed' });
  await expect(true, 'its attempt failed: the rollout requeuing or failed');
  const next = await s.client.startAttempt(rid);
  await expect(true, 'a new attempt: preparing');
  await s.client.updateAttempt(rid, next.attempt.attempt_id, { last_heartbeat_time: Date.now() / 1000 });
  await expect(false, 'an attempt heartbeat with no status change');
  await s.client.updateRollout(rid, { status: 'running' });
  await expect(false, 'into running: an attempt at work');
  await s.client.updateRollout(rid, { status: 'cancelled' });
  await expect(true, 'cancelled');
});

test('a database made before revisions gets the column (every rollout at 0) and the trigger', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-revision-'));
  try {
    const file = path.join(dir, 'old.sqlite');
    const old = new Database(file);
    old.exec(`CREATE TABLE rollouts (seq INTEGER PRIMARY KEY AUTOINCREMENT, rollout_id TEXT NOT NULL UNIQUE, input TEXT NOT NULL,
      start_time REAL NOT NULL, end_time REAL, mode TEXT, resources_id TEXT, status TEXT NOT NULL, config TEXT NOT NULL, metadata TEXT,
      idempotency_key TEXT UNIQUE, span_counter INTEGER NOT NULL DEFAULT 0, attempt_count INTEGER NOT NULL DEFAULT 0, latest_attempt_id TEXT)`);
    old.prepare(`INSERT INTO rollouts (rollout_id, input, start_time, status, config) VALUES ('ro-old', '{}', 1, 'running', '{}')`).run();
    old.close();
    const db = openStoreDatabase(file);
    assert.equal((db.prepare(`SELECT revision FROM rollouts WHERE rollout_id = 'ro-old'`).get() as { revision: number }).revision, 0);
    db.prepare(`UPDATE rollouts SET status = 'succeeded' WHERE rollout_id = 'ro-old'`).run();
    assert.equal((db.prepare(`SELECT revision FROM rollouts WHERE rollout_id = 'ro-old'`).get() as { revision: number }).revision, 1);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Prefer: return=minimal answers a stored span with its sequence id alone, a held one with null', async () => {
  const r = await s.client.startRollout({ t: 3 });
  const post = async (id: string, headers: Record<string, string>) => {
    const res = await fetch(`${s.server.url}/v1/agl/spans`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'return=minimal', ...headers }, body: JSON.stringify(span(r.rollout_id, r.attempt.attempt_id, id)) });
    return [res.status, await res.json()];
  };
  assert.deepEqual(await post('m1', {}), [201, { sequence_id: 1 }]);
  assert.deepEqual(await post('m2', { [IF_REVISION_HEADER]: String(await revisionOf(r.rollout_id)) }), [201, { sequence_id: 2 }]);
  assert.deepEqual(await post('m1', {}), [201, null]);
  assert.equal((await s.client.querySpans(r.rollout_id, r.attempt.attempt_id)).items[0]!.name, 'call', 'stored whole');
});
