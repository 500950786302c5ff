// The terminal cursor (completion order, never missing an out-of-order completion, deleted rollouts counted but
// not listed, rollouts the store ended by itself), events with upstream's triplet view, and rewards reaching the
// store as the reward spans training reads.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { REWARD_SPAN_NAME, REWARD_VALUE_ATTR } from '../../spans/rewards';
import { sleep } from '../store/helpers';
import { startGatewayStore, type GatewayStore } from './helpers';

let g: GatewayStore;
before(async () => { g = await startGatewayStore({ watchdogIntervalMs: 100 }); });
after(() => g.close());

const start = (id: string) => g.api('PATCH', `/api/rollouts/${id}`, { status: { state: 'running', last_attempt_id: '0' } });
const end = (id: string, state: string) => g.api('PATCH', `/api/rollouts/${id}`, { status: { state } });

test('terminal cursor: completion order, pages by next_after, deleted ones counted but not listed', async () => {
  await g.api('POST', '/api/rollouts', ['c1', 'c2', 'c3', 'c4'].map((id, i) => ({ rollout_id: id, input: { data_id: `d${i}` }, is_train: i !== 3 })));
  for (const id of ['c1', 'c2', 'c3', 'c4']) await start(id);
  await end('c3', 'succeeded'); // finishes before the earlier ones
  await end('c1', 'failed');
  const first = (await g.api('GET', '/api/rollouts/terminal?limit=1')).json;
  assert.deepEqual(first, { items: [{ rollout_id: 'c3', state: 'succeeded', data_id: 'd2', is_train: true }], next_after: 1, total_terminal: 2 });
  await end('c4', 'succeeded');
  const rest = (await g.api('GET', `/api/rollouts/terminal?after=${first.next_after}`)).json;
  assert.deepEqual(rest.items.map((i: any) => [i.rollout_id, i.state, i.is_train]), [['c1', 'failed', true], ['c4', 'succeeded', false]]);
  assert.equal(rest.next_after, 3);
  assert.deepEqual((await g.api('GET', `/api/rollouts/terminal?after=${rest.next_after}`)).json, { items: [], next_after: 3, total_terminal: 3 });
  await g.api('DELETE', '/api/rollouts/c1');
  const all = (await g.api('GET', '/api/rollouts/terminal?after=-5&limit=0')).json;
  assert.equal(all.total_terminal, 3, 'deleted rollouts stay counted');
  assert.deepEqual(all.items.map((i: any) => i.rollout_id), ['c3'], 'limit < 1 is 1; the deleted c1 is left out of items');
  assert.equal(all.next_after, 1);
  assert.deepEqual((await g.api('GET', '/api/rollouts/terminal?after=1&limit=5')).json.items.map((i: any) => i.rollout_id), ['c4']);
  assert.equal((await g.api('GET', '/api/rollouts/terminal?after=x')).status, 422);
});

test('a rollout the store times out is failed, says why, and joins the cursor', async () => {
  await g.api('POST', '/api/rollouts', [{ rollout_id: 'slow', input: 1 }]);
  await start('slow');
  // Its store attempt times out 30 s after the controller's timeout: shorten that in the store for the test.
  const rid = (await g.client.queryRollouts({ status_in: ['running'] })).items.find((r) => (r.metadata as any)?.agl1?.rollout_id === 'slow')!.rollout_id;
  await g.client.updateRollout(rid, { config: { timeout_seconds: 0.2 } });
  for (let i = 0; i < 50 && (await g.client.getRolloutById(rid))?.status === 'running'; i++) await sleep(100);
  const r = (await g.api('GET', '/api/rollouts/slow')).json.rollout;
  assert.equal(r.status.state, 'failed');
  assert.match(r.status.error_message, /timed the attempt out/);
  const page = (await g.api('GET', '/api/rollouts/terminal?after=0&limit=100')).json;
  assert.ok(page.items.some((i: any) => i.rollout_id === 'slow'));
  assert.equal((await end('slow', 'succeeded')).status, 409, 'a controller finding it later cannot revive it');
});

test('events: stored in order with the store time; the triplet view trims and keeps the last call per prompt', async () => {
  await g.api('POST', '/api/rollouts', [{ rollout_id: 'ev', input: 1 }]);
  await start('ev');
  const call = (prompt: number[], tokens: number[], logprobs: unknown[], extra: object = {}) => ({
    event_type: 'model_request',
    data: {
      model: 'm', server: { model: 'm', endpoint: 'http://e/v1', version: 2 }, http_status: 200, status: 'ok', ...extra,
      response: { prompt_token_ids: prompt, choices: [{ token_ids: tokens, logprobs: { content: logprobs.map((lp) => ({ logprob: lp })) } }] },
    },
  });
  const posted = await g.api('POST', '/api/rollouts/ev/attempt/0/events', call([1, 2], [3], [-0.5]));
  assert.equal(posted.status, 200);
  assert.equal(posted.json.rollout_id, 'ev');
  assert.equal(typeof posted.json.timestamp, 'number');
  await g.api('POST', '/api/rollouts/ev/attempt/0/events', call([1, 2], [4], [-0.25], { routed_experts: [[1]] })); // a retry of the same prompt
  await g.api('POST', '/api/rollouts/ev/attempt/0/events', call([1, 2, 4, 9], [5], ['nan']));
  await g.api('POST', '/api/rollouts/ev/attempt/0/events', { event_type: 'note', data: { text: 'hi' } });
  await g.api('POST', '/api/rollouts/ev/attempt/0/events', { event_type: 'reward', data: { value: 0.75, reason: 'ok', message: 'dropped in triplets' } });
  const raw = (await g.api('GET', '/api/rollouts/ev/events')).json;
  assert.deepEqual(raw.map((e: any) => e.event_type), ['model_request', 'model_request', 'model_request', 'note', 'reward']);
  const triplets = (await g.api('GET', '/api/rollouts/ev/events?format=triplet')).json;
  assert.deepEqual(triplets.map((e: any) => e.data), [
    { prompt_token_ids: [1, 2], response_token_ids: [4], response_log_probs: [-0.25], server: { model: 'm', version: 2 }, routed_experts: [[1]], http_status: 200, status: 'ok' },
    { prompt_token_ids: [1, 2, 4, 9], response_token_ids: [5], response_log_probs: null, server: { model: 'm', version: 2 }, http_status: 200, status: 'ok' },
    { text: 'hi' },
    { value: 0.75, reason: 'ok' },
  ]);
  const noRoutes = (await g.api('GET', '/api/rollouts/ev/events?format=triplet&include_routed_experts=false')).json;
  assert.ok(!('routed_experts' in noRoutes[0].data));
  assert.deepEqual((await g.api('GET', '/api/rollouts/ev/events?event_type=reward')).json.map((e: any) => e.data.value), [0.75]);
  assert.deepEqual((await g.api('GET', '/api/rollouts/ev')).json.attempts, ['0']);
});

test('a reward event is the reward span of the store attempt; a reward that is not a finite number, or beyond ±1e12, is refused', async () => {
  const run = await g.runRollout('5');
  await start(run.rollout_id);
  const bad = await g.api('POST', `/api/rollouts/${run.rollout_id}/attempt/0/events`, { event_type: 'reward', data: { value: 'high' } });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.json.detail[0].loc, ['body', 'data', 'value']);
  assert.equal((await g.api('POST', `/api/rollouts/${run.rollout_id}/attempt/0/events`, { event_type: 'reward', data: {} })).status, 422);
  // The same bound as the v0.3 JSON and OTLP doors: one rule (common/reward-rule.ts).
  const huge = await g.api('POST', `/api/rollouts/${run.rollout_id}/attempt/0/events`, { event_type: 'reward', data: { value: 1e308 } });
  assert.equal(huge.status, 422);
  assert.match(huge.json.detail[0].msg, /beyond ±1000000000000/);
  assert.equal((await g.api('POST', `/api/rollouts/${run.rollout_id}/attempt/0/events`, { event_type: 'reward', data: { value: -1 } })).status, 200);
  const spans = (await g.client.querySpans(run.rollout_id, 'latest')).items;
  assert.equal(spans.length, 1);
  assert.equal(spans[0]!.name, REWARD_SPAN_NAME);
  assert.equal(spans[0]!.attributes[REWARD_VALUE_ATTR], -1);
  assert.equal((await g.api('POST', '/api/rollouts/ghost/attempt/0/events', { event_type: 'reward', data: { value: 1 } })).status, 404);
  assert.equal((await g.api('POST', `/api/rollouts/${run.rollout_id}/attempt/0/events`, { data: {} })).status, 422);
});

test("an agent's event before the controller's PATCH starts the rollout; that PATCH then confirms it", async () => {
  await g.api('POST', '/api/rollouts', [{ rollout_id: 'early', input: 1 }]);
  await g.api('POST', '/api/rollouts/early/attempt/0/events', { event_type: 'reward', data: { value: 1 } });
  assert.equal((await g.api('GET', '/api/rollouts/early')).json.rollout.status.state, 'running');
  const confirmed = await start('early');
  assert.equal(confirmed.status, 200);
  assert.equal(confirmed.json.status.version, 2);
  assert.equal((await start('early')).status, 409, 'once');
});
