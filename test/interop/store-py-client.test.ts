// The Python LightningStoreClient (v0.3.0) drives our store (enqueue → wait_for_rollouts → query_spans →
// add/update resources and the query calls) while TS runners serve the rollouts; the client's pydantic models
// validate every answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startRunners } from '../../agents/runner';
import { startTestStore, type TestStore } from '../store/helpers';
import { aglVenv, runPython } from './store-python';

let t: TestStore;
before(async () => { t = await startTestStore(); });
after(async () => { await t.close(); });

test('Python LightningStoreClient against our store', { timeout: 20 * 60_000 }, async () => {
  const venv = await aglVenv();
  const runners = startRunners<{ n: number }>(2, (task) => task.n / 4, { storeUrl: t.server.url, pollIntervalMs: 100, log: () => {} });
  try {
    const { stdout } = await runPython(venv.python, 'store-py-client.py', [t.server.url, '4']);
    const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
    assert.ok(line, `no RESULT line in:\n${stdout}`);
    const r = JSON.parse(line.slice('RESULT '.length));
    assert.deepEqual(r.finished, r.ids);
    assert.deepEqual(r.statuses, ['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    assert.deepEqual(r.ids.map((id: string) => r.rewards[id]), [[0.25], [0.5], [0.75], [1]]);
    assert.equal(r.first_has_attempt, true);
    assert.equal(r.missing, true);
    assert.equal(r.attempts_total, 1);
    assert.equal(r.latest_attempt_status, 'succeeded');
    assert.equal(r.queried_total, 4);
    assert.equal(r.updated_version, 2);
    assert.equal(r.latest_model, 'tiny2');
    assert.ok(r.workers >= 2);
    assert.equal(r.stats_rollouts, 4);
    assert.ok(r.next_seq >= 2);
    // What Python enqueued is what the store holds.
    const stored = await t.client.getResourcesById(r.resources_id);
    assert.equal(stored?.version, 2);
  } finally {
    await runners.stop();
  }
});
