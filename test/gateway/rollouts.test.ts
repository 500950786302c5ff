// The 1.0 rollout routes with upstream's semantics: idempotent enqueue by rollout_id, listing by state, the
// status transitions and their 409s, PATCH field rules, DELETE; and how a run's rollouts and the store's retries
// look through them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HELLO_LAUNCH, startGatewayStore, type GatewayStore } from './helpers';

let g: GatewayStore;
before(async () => { g = await startGatewayStore(); });
after(() => g.close());

const local = { agent_class: 'agl1_hello:HelloAgent', env_map: { AGL_TASK: 'input' } };

test('enqueue: 201 with upstream defaults; a known rollout_id returns the rollout unchanged; no id gets a uuid hex', async () => {
  const first = await g.api('POST', '/api/rollouts', [{ input: { q: 1, data_id: 'd1' }, rollout_id: 'idem', config: { local }, metadata: { batch_idx: 3 } }]);
  assert.equal(first.status, 201);
  const r = first.json[0];
  assert.equal(r.rollout_id, 'idem');
  assert.equal(r.is_train, true);
  assert.deepEqual(r.config, { timeout_seconds: 3600, local, k8s: null });
  assert.deepEqual(r.metadata, { batch_idx: 3, sample_idx_in_batch: null });
  assert.equal(r.status.state, 'queuing');
  assert.equal(r.status.version, 1);

  assert.equal((await g.api('PATCH', '/api/rollouts/idem', { status: { state: 'running', last_attempt_id: '0' } })).status, 200);
  const again = await g.api('POST', '/api/rollouts', [{ input: 'other', rollout_id: 'idem' }, { input: 'x' }, { input: 'y', rollout_id: 'dup' }, { input: 'z', rollout_id: 'dup' }]);
  assert.equal(again.status, 201);
  assert.equal(again.json[0].input.q, 1, 'the existing rollout, not the new input');
  assert.equal(again.json[0].status.state, 'running');
  assert.match(again.json[1].rollout_id, /^[0-9a-f]{32}$/);
  assert.equal(again.json[3].input, 'y', 'a repeated id in one request is the rollout its first entry made');
});

test('enqueue: bad bodies answer 422 naming the field', async () => {
  const notList = await g.api('POST', '/api/rollouts', { input: 1 });
  assert.equal(notList.status, 422);
  const noInput = await g.api('POST', '/api/rollouts', [{ rollout_id: 'x' }]);
  assert.equal(noInput.status, 422);
  assert.deepEqual(noInput.json.detail[0].loc, ['body', '0', 'input']);
  const slash = await g.api('POST', '/api/rollouts', [{ input: 1, rollout_id: 'a/b' }]);
  assert.equal(slash.status, 422);
  assert.match(slash.json.detail[0].msg, /must not contain '\/'/);
  const timeout = await g.api('POST', '/api/rollouts', [{ input: 1, config: { timeout_seconds: 1.5 } }]);
  assert.deepEqual(timeout.json.detail[0].loc, ['body', '0', 'config', 'timeout_seconds']);
});

test('transitions: queuing → running → succeeded; every other one is 409 with upstream message; terminal is final', async () => {
  await g.api('POST', '/api/rollouts', [{ input: 1, rollout_id: 't1', config: { local } }]);
  const bad = await g.api('PATCH', '/api/rollouts/t1', { status: { state: 'succeeded' } });
  assert.equal(bad.status, 409);
  assert.equal(bad.json.detail, 'Rollout t1: cannot transition queuing -> succeeded');
  const running = await g.api('PATCH', '/api/rollouts/t1', { status: { state: 'running', last_attempt_id: '0' } });
  assert.equal(running.json.status.state, 'running');
  assert.equal(running.json.status.version, 2);
  assert.equal((await g.api('PATCH', '/api/rollouts/t1', { status: { state: 'running' } })).json.detail, 'Rollout t1: cannot transition running -> running');
  assert.equal((await g.api('PATCH', '/api/rollouts/t1', { status: { state: 'queuing' } })).status, 409);
  const done = await g.api('PATCH', '/api/rollouts/t1', { status: { state: 'succeeded', k8s_job_name: 'job-1' } });
  assert.equal(done.json.status.state, 'succeeded');
  assert.equal(done.json.status.k8s_job_name, 'job-1');
  assert.equal(done.json.status.version, 3);
  for (const state of ['failed', 'running', 'queuing', 'succeeded']) {
    assert.equal((await g.api('PATCH', '/api/rollouts/t1', { status: { state } })).json.detail, `Rollout t1: cannot transition succeeded -> ${state}`);
  }
  // The store's rollout ended with it.
  const stored = await g.client.queryRollouts({ rollout_id_contains: '' });
  assert.ok(stored.items.some((r) => r.status === 'succeeded' && (r.metadata as any)?.agl1?.rollout_id === 't1'));
});

test('PATCH: an empty patch changes nothing; fields other than state bump the version; unknown status keys 422; unknown id 404', async () => {
  await g.api('POST', '/api/rollouts', [{ input: 1, rollout_id: 'p1' }]);
  const empty = await g.api('PATCH', '/api/rollouts/p1', { status: {} });
  assert.equal(empty.json.status.version, 1);
  const job = await g.api('PATCH', '/api/rollouts/p1', { status: { k8s_job_name: 'agl-rollout-p1', error_message: 'note' } });
  assert.equal(job.json.status.version, 2);
  assert.equal(job.json.status.state, 'queuing');
  assert.equal(job.json.status.error_message, 'note');
  const extra = await g.api('PATCH', '/api/rollouts/p1', { status: { state: 'running', owner: 'me' } });
  assert.equal(extra.status, 422);
  assert.deepEqual(extra.json.detail[0].loc, ['body', 'status']);
  assert.match(extra.json.detail[0].msg, /owner/);
  assert.equal((await g.api('GET', '/api/rollouts/p1')).json.rollout.status.state, 'queuing', 'the refused patch changed nothing');
  const missing = await g.api('PATCH', '/api/rollouts/nope', { status: { state: 'running' } });
  assert.equal(missing.status, 404);
  assert.equal(missing.json.detail, 'Rollout not found: nope');
  assert.equal((await g.api('GET', '/api/rollouts/nope')).status, 404);
});

test('listing: state_in is required and checked; insertion order; limit', async () => {
  assert.equal((await g.api('GET', '/api/rollouts')).status, 422);
  const wrong = await g.api('GET', '/api/rollouts?state_in=done');
  assert.equal(wrong.status, 422);
  assert.deepEqual(wrong.json.detail[0].loc, ['query', 'state_in', 0]);
  await g.api('POST', '/api/rollouts', [{ input: 'a', rollout_id: 'l1' }, { input: 'b', rollout_id: 'l2' }, { input: 'c', rollout_id: 'l3' }]);
  await g.api('PATCH', '/api/rollouts/l2', { status: { state: 'running' } });
  const queued = (await g.api('GET', '/api/rollouts?state_in=queuing')).json.map((r: any) => r.rollout_id);
  assert.deepEqual(queued.filter((id: string) => id.startsWith('l')), ['l1', 'l3']);
  const both = (await g.api('GET', '/api/rollouts?state_in=queuing&state_in=running')).json.map((r: any) => r.rollout_id);
  assert.deepEqual(both.filter((id: string) => id.startsWith('l')), ['l1', 'l2', 'l3']);
  assert.equal((await g.api('GET', '/api/rollouts?state_in=queuing&limit=1')).json.length, 1);
  const succeeded = (await g.api('GET', '/api/rollouts?state_in=succeeded')).json.map((r: any) => r.rollout_id);
  assert.ok(succeeded.includes('t1') && !succeeded.includes('l2'));
});

test('DELETE: 204, gone (404, not listed), a missing id is a no-op, and the id can be enqueued afresh', async () => {
  await g.api('POST', '/api/rollouts', [{ input: 'old', rollout_id: 'd1' }]);
  assert.equal((await g.api('DELETE', '/api/rollouts/d1')).status, 204);
  assert.equal((await g.api('GET', '/api/rollouts/d1')).status, 404);
  assert.ok(!(await g.api('GET', '/api/rollouts?state_in=queuing')).json.some((r: any) => r.rollout_id === 'd1'));
  assert.equal((await g.api('DELETE', '/api/rollouts/d1')).status, 204);
  const fresh = await g.api('POST', '/api/rollouts', [{ input: 'new', rollout_id: 'd1' }]);
  assert.equal(fresh.json[0].input, 'new');
});

test("a run's rollout: named by its store id, launchable by a controller; the store's retry is <id>.retry1, the failed one stays failed", async () => {
  const run = await g.runRollout('7', { max_attempts: 2, retry_condition: ['failed'], timeout_seconds: 120 });
  const seen = (await g.api('GET', '/api/rollouts?state_in=queuing')).json.find((r: any) => r.rollout_id === run.rollout_id);
  assert.ok(seen, 'listed for the controller');
  assert.deepEqual(seen.config, { timeout_seconds: 90, local: { agent_class: HELLO_LAUNCH.agentClass, env_map: HELLO_LAUNCH.envMap }, k8s: null });
  assert.equal(seen.input, '7');
  await g.api('PATCH', `/api/rollouts/${run.rollout_id}`, { status: { state: 'running', last_attempt_id: '0' } });
  assert.equal((await g.client.getRolloutById(run.rollout_id))?.status, 'running');
  const failed = await g.api('PATCH', `/api/rollouts/${run.rollout_id}`, { status: { state: 'failed', error_message: 'subprocess exited with code 1' } });
  assert.equal(failed.json.status.state, 'failed');
  assert.equal((await g.client.getRolloutById(run.rollout_id))?.status, 'requeuing', 'the store retries it');
  const retry = (await g.api('GET', '/api/rollouts?state_in=queuing')).json.find((r: any) => r.rollout_id === `${run.rollout_id}.retry1`);
  assert.equal(retry?.status.state, 'queuing');
  assert.equal((await g.api('GET', `/api/rollouts/${run.rollout_id}`)).json.rollout.status.state, 'failed', 'terminal is final');
  await g.api('PATCH', `/api/rollouts/${run.rollout_id}.retry1`, { status: { state: 'running' } });
  await g.api('PATCH', `/api/rollouts/${run.rollout_id}.retry1`, { status: { state: 'succeeded' } });
  const stored = await g.client.getRolloutById(run.rollout_id);
  assert.equal(stored?.status, 'succeeded');
  assert.equal((stored as any).attempt.sequence_id, 2);
  assert.equal((await g.api('GET', `/api/rollouts/${run.rollout_id}.retry2`)).status, 404, 'no third attempt');
});

test("a run's rollout without 1.0 launch metadata is not part of the 1.0 API", async () => {
  const plain = await g.client.enqueueRollout('v0.3 task');
  assert.equal((await g.api('GET', `/api/rollouts/${plain.rollout_id}`)).status, 404);
  assert.ok(!(await g.api('GET', '/api/rollouts?state_in=queuing')).json.some((r: any) => r.rollout_id === plain.rollout_id));
});

test('a run rollout cancelled in the store while queuing is failed; a late call for it is a 409 naming why', async () => {
  const run = await g.runRollout('9');
  await g.client.updateRollout(run.rollout_id, { status: 'cancelled' });
  const r = (await g.api('GET', `/api/rollouts/${run.rollout_id}`)).json.rollout;
  assert.deepEqual([r.status.state, r.status.error_message], ['failed', 'cancelled in the store']);
  const withResources = await g.runRollout('9', {}, (await g.client.addResources({ main_llm: { resource_type: 'proxy_llm', endpoint: 'http://127.0.0.1:9/v1', model: 'm', api_key: null, sampling_parameters: {} } })).resources_id);
  await g.client.updateRollout(withResources.rollout_id, { status: 'cancelled' });
  const late = await g.api('POST', `/proxy/rollout/${withResources.rollout_id}/attempt/0/mode/train/openai/v1/chat/completions`, { messages: [] });
  assert.equal(late.status, 409);
  assert.match(late.json.detail, /ended before it started \(cancelled in the store\)/);
});

test('DELETE of an unfinished run rollout cancels it in the store (the run counts it) and hides it', async () => {
  const run = await g.runRollout('8');
  assert.equal((await g.api('DELETE', `/api/rollouts/${run.rollout_id}`)).status, 204);
  assert.equal((await g.api('GET', `/api/rollouts/${run.rollout_id}`)).status, 404);
  assert.equal((await g.client.getRolloutById(run.rollout_id))?.status, 'cancelled');
});

test('the key: with a store token every route but /healthz needs it, as a bearer token or x-api-key', async () => {
  const t = await startGatewayStore({ token: 'sekrit' });
  try {
    const bare = await fetch(`${t.server.url}/api/rollouts?state_in=queuing`);
    assert.equal(bare.status, 401);
    assert.deepEqual(await bare.json(), { detail: 'Invalid or missing API key' });
    assert.equal((await fetch(`${t.server.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${t.server.url}/api/rollouts?state_in=queuing`, { headers: { 'x-api-key': 'sekrit' } })).status, 200);
    assert.equal((await t.api('GET', '/api/rollouts?state_in=queuing')).status, 200);
  } finally {
    await t.close();
  }
});
