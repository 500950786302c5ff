// Policies by id: a rollout-scoped call samples from the policy its rollout was enqueued under (the store's
// resources carry it), whatever the proxy's current policy is. Async switches (drain: false) neither hold nor cut
// calls in flight; the synchronous switch still drains; policies nobody uses are released and come back on demand.
// Real store, real HTTP, the real publishPolicy activity; samplers answer with the name of their target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../proxy/errors';
import { RolloutPolicies } from '../../proxy/rollout-policy';
import { StoreClient } from '../../store/client';
import { policy, post, startHarness, TargetSamplerFactory } from './helpers';
import type { Harness } from './helpers';
import { ask, enqueue, MSG, publish, runSettings, samplerPathOf, scopedUrl, sleep, spansOf } from './rollout-helpers';

async function harness(opts: { createDelayMs?: number; policyIdleMs?: number; drainTimeoutMs?: number } = {}) {
  const factory = new TargetSamplerFactory(opts.createDelayMs ?? 0);
  const h = await startHarness({ withStore: true, factory, policyIdleMs: opts.policyIdleMs, drainTimeoutMs: opts.drainTimeoutMs ?? 10_000 });
  const store = new StoreClient(h.store!.url, { retryDelaysMs: [50], token: '' });
  return { h, factory, store };
}

const adminState = async (h: Harness) => (await (await fetch(`${h.proxy.url}/admin/policy`)).json()) as any;

async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

test('two rollouts under two policies each get answers from their own, turn after turn', async () => {
  const { h, factory, store } = await harness();
  try {
    const run = runSettings(h.proxy.url, h.store!.url, 'alpha');
    const r1 = await enqueue(store, await publish(run, 1));
    const r2 = await enqueue(store, await publish(run, 2)); // the current policy from here on
    for (let turn = 0; turn < 3; turn++) {
      const [a, b] = await Promise.all([ask(h.proxy.url, r1, `turn ${turn}`), ask(h.proxy.url, r2, `turn ${turn}`)]);
      assert.deepEqual(a, { from: samplerPathOf('alpha', 1), policy: 'alpha/1/train/1', sequenceId: turn + 1 });
      assert.deepEqual(b, { from: samplerPathOf('alpha', 2), policy: 'alpha/2/train/2', sequenceId: turn + 1 });
    }
    for (const [r, step] of [[r1, 1], [r2, 2]] as const) {
      const spans = await spansOf(store, r);
      assert.equal(spans.length, 3);
      for (const s of spans) {
        assert.equal(s.attributes['agl.policy.switch_id'], `alpha/${step}/train/${step}`);
        assert.equal(s.attributes['agl.policy.sampler_path'], samplerPathOf('alpha', step));
        // The step that served the call, and the proxy's current one when it ended (policy 2 by then): the train
        // step reads each group's staleness from the first.
        assert.equal(s.attributes['agl.policy.step'], step);
        assert.equal(s.attributes['agl.policy.step_at_end'], 2);
        assert.equal(s.attributes['agl.policy.switch_id_at_end'], 'alpha/2/train/2');
      }
    }
    const plain = await post(`${h.proxy.url}/v1/chat/completions`, MSG());
    assert.equal(plain.headers.get('x-agl-policy'), 'alpha/2/train/2', 'unscoped calls use the current policy');
    // The replaced policy was kept with its sampler: no second sampling session for its rollouts.
    assert.deepEqual(factory.created.map((t) => t.samplerPath ?? t.baseModel), ['local/tiny-hello', samplerPathOf('alpha', 1), samplerPathOf('alpha', 2)]);
    const state = await adminState(h);
    assert.deepEqual(state.registry.map((e: any) => e.switchId).sort(), ['alpha/1/train/1', 'p0']);
    const health = (await (await fetch(`${h.proxy.url}/health`)).json()) as any;
    assert.deepEqual(health.registry.map((e: any) => e.switchId).sort(), ['alpha/1/train/1', 'p0']);
  } finally {
    await h.close();
  }
});

test('an async publish (drain: false) neither blocks nor cuts a call in flight; the new policy does not wait for it', async () => {
  const { h, factory, store } = await harness();
  try {
    const run = runSettings(h.proxy.url, h.store!.url, 'beta', true);
    const r1 = await enqueue(store, await publish(run, 1));
    const open = factory.gate(samplerPathOf('beta', 1));
    let slowDone = false;
    const slow = ask(h.proxy.url, r1, 'a long turn').finally(() => (slowDone = true));
    await until(() => factory.calls.includes(samplerPathOf('beta', 1)), 'the call to reach the sampler');

    const started = Date.now();
    const r2 = await enqueue(store, await publish(run, 2));
    assert.ok(Date.now() - started < 2000, `the publish did not wait for the call in flight (${Date.now() - started} ms)`);
    const state = await adminState(h);
    assert.equal(state.policy.switchId, 'beta/2/train/2');
    assert.deepEqual(await ask(h.proxy.url, r2), { from: samplerPathOf('beta', 2), policy: 'beta/2/train/2', sequenceId: 1 });
    assert.equal((await post(`${h.proxy.url}/v1/chat/completions`, MSG())).headers.get('x-agl-policy'), 'beta/2/train/2');
    assert.equal(slowDone, false, 'the old call is still running');

    open();
    assert.deepEqual(await slow, { from: samplerPathOf('beta', 1), policy: 'beta/1/train/1', sequenceId: 1 });
    assert.deepEqual(await ask(h.proxy.url, r1, 'next turn'), { from: samplerPathOf('beta', 1), policy: 'beta/1/train/1', sequenceId: 2 });
    assert.equal(factory.created.length, 3, 'base model, step 1, step 2: nothing opened twice');

    // The admin body: drain false answers at once, is validated, and is not part of the switch's identity.
    const body = { switchId: 'beta/2/train/2', modelName: 'local/tiny-hello', samplerPath: samplerPathOf('beta', 2), baseModel: 'local/tiny-hello', renderer: 'role_colon', retryAttempts: 0, policyStep: 2, sampling: { temperature: 1, topK: -1, topP: 1, maxTokens: 64 } };
    const again = await post(`${h.proxy.url}/admin/policy`, { ...body, drain: true });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.switched, false);
    const bad = await post(`${h.proxy.url}/admin/policy`, { ...body, switchId: 'x', drain: 'no' });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /drain must be a boolean/);
    const next = await post(`${h.proxy.url}/admin/policy`, { ...body, switchId: 'beta/3', samplerPath: samplerPathOf('beta', 3), drain: false });
    assert.equal(next.json.drain, false);
    assert.equal(next.json.drainMs, 0);
  } finally {
    await h.close();
  }
});

test('a synchronous publish (drain by default) still waits for calls in flight and holds new ones', async () => {
  const { h, factory, store } = await harness();
  try {
    const run = runSettings(h.proxy.url, h.store!.url, 'gamma');
    const r1 = await enqueue(store, await publish(run, 1));
    const open = factory.gate(samplerPathOf('gamma', 1));
    const slow = ask(h.proxy.url, r1, 'a long turn');
    await until(() => factory.calls.includes(samplerPathOf('gamma', 1)), 'the call to reach the sampler');
    let published = false;
    const pub = publish(run, 2).finally(() => (published = true));
    await sleep(300);
    let lateDone = false;
    const late = post(`${h.proxy.url}/v1/chat/completions`, MSG()).finally(() => (lateDone = true));
    await sleep(200);
    assert.equal(published, false, 'the switch waits for the call in flight');
    assert.equal(lateDone, false, 'a call arriving during the switch is held');
    open();
    const r2 = await enqueue(store, await pub);
    assert.equal((await late).headers.get('x-agl-policy'), 'gamma/2/train/2');
    assert.deepEqual(await slow, { from: samplerPathOf('gamma', 1), policy: 'gamma/1/train/1', sequenceId: 1 });
    assert.deepEqual(await ask(h.proxy.url, r2), { from: samplerPathOf('gamma', 2), policy: 'gamma/2/train/2', sequenceId: 1 });
    const state = await adminState(h);
    assert.equal(state.switches, 3);
  } finally {
    await h.close();
  }
});

test('a policy no call uses is released after the idle period and re-created from the store on demand; first calls share one creation', async () => {
  const { h, factory, store } = await harness({ createDelayMs: 150, policyIdleMs: 300 });
  try {
    // Resources published through another proxy: this one never switched to the policy.
    const spec = { switchId: 'other/1', modelName: 'local/tiny-hello', samplerPath: 'tinker://other/sampler_weights/1', baseModel: 'local/tiny-hello', renderer: 'role_colon' };
    await store.updateResources('other-b1', { main_llm: { resource_type: 'proxy_llm', endpoint: h.proxy.url, model: 'local/tiny-hello', api_key: null, sampling_parameters: {}, agl_policy: spec } });
    const rollouts = await Promise.all([0, 1, 2, 3, 4].map((i) => enqueue(store, 'other-b1', `t${i}`)));
    const answers = await Promise.all(rollouts.map((r) => ask(h.proxy.url, r)));
    for (const a of answers) assert.deepEqual(a, { from: spec.samplerPath, policy: 'other/1', sequenceId: 1 });
    const creations = () => factory.created.filter((t) => t.samplerPath === spec.samplerPath).length;
    assert.equal(creations(), 1, 'five concurrent first calls, one sampler');
    assert.equal((await adminState(h)).policy.switchId, 'p0', 'the current policy is untouched');
    assert.deepEqual((await adminState(h)).registry.map((e: any) => e.switchId), ['other/1']);

    await sleep(700);
    assert.deepEqual((await adminState(h)).registry, [], 'released once idle');
    assert.deepEqual(await ask(h.proxy.url, rollouts[0], 'again'), { from: spec.samplerPath, policy: 'other/1', sequenceId: 2 });
    assert.equal(creations(), 2, 're-created on demand');
    assert.equal(h.proxy.registry.released, 1);
  } finally {
    await h.close();
  }
});

test('a rollout whose resources carry no policy uses the current one; a malformed one is refused', async () => {
  const { h, store } = await harness();
  try {
    // As Python users enqueue: a plain proxy LLM resource.
    await store.updateResources('py', { main_llm: { resource_type: 'proxy_llm', endpoint: h.proxy.url, model: 'local/tiny-hello', api_key: null, sampling_parameters: {} } });
    const r = await enqueue(store, 'py');
    assert.deepEqual(await ask(h.proxy.url, r), { from: 'local/tiny-hello', policy: 'p0', sequenceId: 1 });
    const sw = await post(`${h.proxy.url}/admin/policy`, { ...policy({ switchId: 'p1', samplerPath: 'tinker://m/sampler_weights/1' }) });
    assert.equal(sw.status, 200, sw.text);
    assert.deepEqual(await ask(h.proxy.url, r), { from: 'tinker://m/sampler_weights/1', policy: 'p1', sequenceId: 2 }, 'it follows the current policy');

    await store.updateResources('bad', { main_llm: { resource_type: 'proxy_llm', endpoint: h.proxy.url, model: 'm', api_key: null, sampling_parameters: {}, agl_policy: { switchId: 'bad' } } });
    const b = await enqueue(store, 'bad');
    const res = await post(scopedUrl(h.proxy.url, b), MSG());
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.error.code, 'invalid_rollout_policy');
    assert.match(res.json.error.message, /resources bad: main_llm.agl_policy is not a valid policy: modelName is required/);
  } finally {
    await h.close();
  }
});

test("a client's retry is answered from the recorded span when it was given by the rollout's own (non-current) policy", async () => {
  const { h, factory, store } = await harness();
  try {
    const run = runSettings(h.proxy.url, h.store!.url, 'delta', true);
    const r1 = await enqueue(store, await publish(run, 1));
    await publish(run, 2);
    const first = await post(scopedUrl(h.proxy.url, r1), MSG('once'));
    assert.equal(first.status, 200, first.text);
    const sampled = factory.calls.length;
    const retry = await post(scopedUrl(h.proxy.url, r1), MSG('once'), { 'x-stainless-retry-count': '1' });
    assert.equal(retry.status, 200, retry.text);
    assert.equal(retry.json.id, first.json.id, 'the recorded answer');
    assert.equal(retry.headers.get('x-agl-policy'), 'delta/1/train/1');
    assert.equal(factory.calls.length, sampled, 'no second sample');
    assert.equal((await spansOf(store, r1)).length, 1);
  } finally {
    await h.close();
  }
});

test('the policy resolution answers 503 when the store cannot be reached, and asks again next time', async () => {
  let up = false;
  const facts = async (rid: string) => {
    if (!up) throw new Error('connect ECONNREFUSED');
    return { seedBase: 'seed:1', resourcesId: rid === 'ro-2' ? 'res-2' : null, revision: null };
  };
  const policies = new RolloutPolicies('http://127.0.0.1:9/v1/agl', {}, 1000, facts);
  await assert.rejects(policies.policyOf('ro-1'), (err: unknown) => err instanceof ApiError && err.status === 503 && err.code === 'store_unavailable');
  up = true;
  assert.equal(await policies.policyOf('ro-1'), null, 'no resources: the current policy');
  // The rollout is known but its resources cannot be read (nothing listens on port 9).
  await assert.rejects(policies.policyOf('ro-2'), (err: unknown) => err instanceof ApiError && err.status === 503 && /res-2|rollout ro-2/.test(err.message));
});
