// Retention: a run's finished rollouts of old batches go with their attempts and spans; unfinished ones, newer
// batches and other runs' rollouts stay; the pages freed are given back to the disk while the store runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Span } from '../../store/types';
import { policyResourcesId } from '../../common/policy-resources-id';
import { sleep, startTestStore, type TestStore } from './helpers';

let t: TestStore;
before(async () => { t = await startTestStore({ watchdogIntervalMs: 50 }); });
after(async () => { await t.close(); });

const span = (rolloutId: string, attemptId: string, i: number, payload: string): Span => ({
  rollout_id: rolloutId, attempt_id: attemptId, sequence_id: i, trace_id: 'a'.repeat(32), span_id: i.toString(16).padStart(16, '0'),
  parent_id: null, name: 'test.span', status: { status_code: 'OK', description: null }, attributes: { payload },
  events: [], links: [], start_time: 1, end_time: 2, context: null, parent: null, resource: { attributes: {}, schema_url: '' },
});

/** A rollout of `run`'s batch `batch` with `spans` spans of about 20 KiB, finished unless `running`. */
async function rollout(run: string, batch: number, member: number, spans: number, running = false): Promise<string> {
  const key = `${run}/train/${batch}/0/${member}`;
  const r = await t.client.startRollout({ task: batch }, { idempotencyKey: key, metadata: { batch, idempotency_key: key } });
  for (let i = 1; i <= spans; i++) await t.client.addSpan(span(r.rollout_id, r.attempt.attempt_id, i, 'x'.repeat(20_000)));
  if (!running) await t.client.updateRollout(r.rollout_id, { status: 'succeeded' });
  return r.rollout_id;
}

test('pruning removes finished rollouts of batches before the cut, with their spans, and gives the space back', async () => {
  const ids: Record<string, string> = {};
  for (let b = 0; b < 6; b++) for (let m = 0; m < 2; m++) ids[`${b}/${m}`] = await rollout('run@1', b, m, 20);
  const stillRunning = await rollout('run@1', 0, 2, 1, true);
  const otherRun = await rollout('run@10', 0, 0, 1); // shares the prefix "run@1" but not "run@1/"
  const before = (await t.client.healthDetail()).disk!;
  assert.equal(before.auto_vacuum, 'incremental');

  const res = await t.client.pruneRun('run@1', 4);
  assert.deepEqual(res, { rollouts: 8, spans: 160, resources: 0, stepRecords: 0 });
  for (let b = 0; b < 6; b++) {
    for (let m = 0; m < 2; m++) {
      const r = await t.client.getRolloutById(ids[`${b}/${m}`]!);
      if (b < 4) assert.equal(r, null, `batch ${b} pruned`);
      else assert.ok(r, `batch ${b} kept`);
    }
  }
  assert.equal((await t.client.querySpans(ids['0/0']!)).items.length, 0, 'its spans went with it');
  assert.equal((await t.client.querySpans(ids['5/0']!)).items.length, 20, 'a kept rollout keeps its spans');
  assert.ok(await t.client.getRolloutById(stillRunning), 'an unfinished rollout is kept whatever its batch');
  assert.ok(await t.client.getRolloutById(otherRun), "another run's rollout is kept");
  assert.deepEqual(await t.client.pruneRun('run@1', 4), { rollouts: 0, spans: 0, resources: 0, stepRecords: 0 }, 'idempotent');

  // The freed pages are given back within a few watchdog ticks: the file shrinks by most of what was removed.
  let after = before;
  for (let i = 0; i < 100 && after.db_bytes > before.db_bytes - 2_000_000; i++) {
    await sleep(100);
    after = (await t.client.healthDetail()).disk!;
  }
  assert.ok(after.db_bytes < before.db_bytes - 2_000_000, `database ${before.db_bytes} -> ${after.db_bytes} bytes after removing ~3.2 MB of spans`);
});

test("the resources rows a run's old steps published go too, except the latest and any a kept rollout names", async () => {
  const row = (id: string) => t.client.updateResources(id, { main_llm: { resource_type: 'proxy_llm', endpoint: 'http://x', model: 'm', api_key: null, sampling_parameters: {} } });
  const ids = (run: string, batch: number, purpose: 'train' | 'eval' = 'train') => policyResourcesId(run, batch, purpose);
  await row(ids('pol@1', 0, 'eval'));
  for (let b = 0; b < 6; b++) await row(ids('pol@1', b));
  await row(ids('pol@10', 0)); // another run whose name extends this one's
  await row('pol-1-b2-notes'); // not a policy row of the run
  // Still running under batch 1's policy: its resources stay whatever the cut.
  const running = await t.client.startRollout({ task: 1 }, { idempotencyKey: 'pol@1/train/1/0/0', resourcesId: ids('pol@1', 1), metadata: { batch: 1 } });
  await row(ids('pol@1', 6)); // the latest is a kept batch's
  assert.deepEqual(await t.client.pruneRun('pol@1', 4), { rollouts: 0, spans: 0, resources: 4, stepRecords: 0 });
  const left = async (id: string) => (await t.client.getResourcesById(id)) !== null;
  for (const [id, kept] of [
    [ids('pol@1', 0, 'eval'), false], [ids('pol@1', 0), false], [ids('pol@1', 1), true], [ids('pol@1', 2), false], [ids('pol@1', 3), false],
    [ids('pol@1', 4), true], [ids('pol@1', 6), true], [ids('pol@10', 0), true], ['pol-1-b2-notes', true],
  ] as const) assert.equal(await left(id), kept, `${id} ${kept ? 'kept' : 'removed'}`);
  // Once that rollout is done and its batch cut, its row goes; the latest row never does.
  await t.client.updateRollout(running.rollout_id, { status: 'succeeded' });
  assert.deepEqual(await t.client.pruneRun('pol@1', 100), { rollouts: 1, spans: 0, resources: 3, stepRecords: 0 });
  assert.ok(await left(ids('pol@1', 6)), 'the latest row stays');
});

test("old steps' commit records go, except those whose state a checkpoint row names; metrics and other runs' stay", async () => {
  const state = (run: string, step: number) => `tinker://${run}/weights/${String(step).padStart(6, '0')}`;
  const stepRecord = (run: string, step: number) => ({
    kind: 'step' as const, step, key: state(run, step),
    body: JSON.stringify({ parentStatePath: state(run, step), result: { state: { statePath: state(run, step + 1), step: step + 1 }, metrics: {} } }),
  });
  for (const run of ['rec@1', 'rec@2']) {
    await t.client.putRunRecords(run, Array.from({ length: 10 }, (_, s) => stepRecord(run, s)));
    await t.client.putRunRecords(run, Array.from({ length: 10 }, (_, s) => ({ kind: 'metrics' as const, step: s, key: '', body: JSON.stringify({ step: s }) })));
  }
  // A checkpoint after step 3 names the state step 2 made; a row with no state_path names nothing.
  await t.client.putRunRecords('rec@1', [
    { kind: 'checkpoint', step: 3, key: '000003', body: JSON.stringify({ name: '000003', batch: 3, state_path: state('rec@1', 3) }) },
    { kind: 'checkpoint', step: 4, key: 'odd', body: 'not json' },
  ]);
  assert.deepEqual(await t.client.pruneRun('rec@1', 6), { rollouts: 0, spans: 0, resources: 0, stepRecords: 5 });
  const steps = async (run: string) => (await t.client.runRecords(run, { kind: 'step', limit: 100 })).map((r) => r.step);
  assert.deepEqual(await steps('rec@1'), [2, 6, 7, 8, 9]);
  assert.deepEqual(await steps('rec@2'), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "another run's records stay");
  assert.equal((await t.client.runRecords('rec@1', { kind: 'metrics', limit: 100 })).length, 10, 'metrics stay');
});

test("removing old steps' commit records gives their pages back though each step's metrics stay", async () => {
  // Each step writes a commit record and a metrics row of about the same size, as a run does. Were both in one table
  // in write order, every page would keep a metrics row after the prune and no page would come free.
  const pad = (n: number) => 'x'.repeat(n);
  const steps = 600;
  for (let s0 = 0; s0 < steps; s0 += 50) {
    for (let s = s0; s < s0 + 50; s++) {
      await t.client.putRunRecords('pages@1', [
        { kind: 'step', step: s, key: `tinker://pages/weights/${s}`, body: JSON.stringify({ parentStatePath: `tinker://pages/weights/${s}`, result: { state: { statePath: `tinker://pages/weights/${s + 1}` } }, pad: pad(1700) }) },
        { kind: 'metrics', step: s, body: JSON.stringify({ step: s, pad: pad(1500) }) },
      ]);
    }
  }
  await sleep(300); // earlier tests' freed pages are given back first
  const before = (await t.client.healthDetail()).disk!;
  assert.equal((await t.client.pruneRun('pages@1', steps)).stepRecords, steps);
  const stepBytes = steps * 1700;
  let after = before;
  for (let i = 0; i < 100 && after.db_bytes > before.db_bytes - stepBytes / 2; i++) {
    await sleep(100);
    after = (await t.client.healthDetail()).disk!;
  }
  assert.ok(after.db_bytes <= before.db_bytes - stepBytes / 2, `database ${before.db_bytes} -> ${after.db_bytes} bytes after removing ${stepBytes} bytes of step records`);
  assert.equal((await t.client.runRecords('pages@1', { kind: 'metrics', limit: 1000 })).length, steps, 'metrics stay');
});

test('a bad cut is refused with a one-line reason', async () => {
  await assert.rejects(t.client.pruneRun('run@1', -1), /before_batch/);
});
