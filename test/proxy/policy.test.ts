// The policy switch ("proxy restart"): drain, hold, resume, idempotent switchId, bounded drain, admin token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { policy, post, startHarness } from './helpers';

const MSG = { messages: [{ role: 'user', content: 'hi' }] };
const P1 = { switchId: 'batch-1', modelName: 'local/tiny-hello', samplerPath: 'tinker://run/sampler_weights/000001', baseModel: 'local/tiny-hello', renderer: 'role_colon', sampling: { temperature: 0.7, topK: 20, topP: 0.95, maxTokens: 64 } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('switch drains in-flight calls, holds arriving calls, then serves them with the new policy', async () => {
  const h = await startHarness({ delayMs: 300 });
  try {
    const early = [1, 2, 3].map(() => post(`${h.proxy.url}/v1/chat/completions`, MSG));
    await sleep(60);
    const sw = post(`${h.proxy.url}/admin/policy`, P1);
    await sleep(60);
    const late = post(`${h.proxy.url}/v1/chat/completions`, MSG);
    const s = await sw;
    assert.equal(s.status, 200, s.text);
    assert.equal(s.json.switched, true);
    assert.equal(s.json.undrained, 0);
    assert.equal(s.json.policy.switchId, 'batch-1');
    for (const r of await Promise.all(early)) {
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-agl-policy'), 'p0');
    }
    const l = await late;
    assert.equal(l.status, 200);
    assert.equal(l.headers.get('x-agl-policy'), 'batch-1');
    assert.equal(l.json.choices[0].message.content, 'Hello 0! t=0.7', 'the new default temperature applies');
    assert.deepEqual(h.factory.created.at(-1), { samplerPath: 'tinker://run/sampler_weights/000001' });
    const g = (await (await fetch(`${h.proxy.url}/admin/policy`)).json()) as any;
    assert.equal(g.policy.switchId, 'batch-1');
    assert.deepEqual(g.policy.sampling, P1.sampling);
    assert.equal(g.switches, 2);
  } finally {
    await h.close();
  }
});

test('the same switchId twice is one switch; reusing it for another policy is a 409', async () => {
  const h = await startHarness();
  try {
    const [a, b] = await Promise.all([post(`${h.proxy.url}/admin/policy`, P1), post(`${h.proxy.url}/admin/policy`, P1)]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.deepEqual([a.json.switched, b.json.switched].sort(), [false, true]);
    const c = await post(`${h.proxy.url}/admin/policy`, P1);
    assert.equal(c.json.switched, false);
    assert.equal(h.factory.created.length, 2, 'initial policy + one switch');
    const d = await post(`${h.proxy.url}/admin/policy`, { ...P1, samplerPath: 'tinker://run/sampler_weights/000002' });
    assert.equal(d.status, 409);
    assert.equal(d.json.error.code, 'switch_conflict');
    // An older switch replayed after a newer one does not roll the policy back.
    await post(`${h.proxy.url}/admin/policy`, { ...P1, switchId: 'batch-2', samplerPath: 'tinker://run/sampler_weights/000002' });
    const e = await post(`${h.proxy.url}/admin/policy`, P1);
    assert.equal(e.json.switched, false);
    assert.equal(e.json.policy.switchId, 'batch-2');
  } finally {
    await h.close();
  }
});

test('drain wait is bounded: a slow call finishes on the old policy after the switch', async () => {
  const h = await startHarness({ delayMs: 800, drainTimeoutMs: 100 });
  try {
    const slow = post(`${h.proxy.url}/v1/chat/completions`, MSG);
    await sleep(50);
    const s = await post(`${h.proxy.url}/admin/policy`, P1);
    assert.equal(s.json.switched, true);
    assert.equal(s.json.undrained, 1);
    const r = await slow;
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-agl-policy'), 'p0');
  } finally {
    await h.close();
  }
});

test('before any policy, calls wait for the first switch (and give up with 503 after policyWaitMs)', async () => {
  const h = await startHarness({ initial: null, policyWaitMs: 2000 });
  try {
    const waiting = post(`${h.proxy.url}/v1/chat/completions`, MSG);
    await sleep(100);
    assert.equal((await post(`${h.proxy.url}/admin/policy`, { ...P1, switchId: 'first' })).status, 200);
    const r = await waiting;
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-agl-policy'), 'first');
  } finally {
    await h.close();
  }
  const h2 = await startHarness({ initial: null, policyWaitMs: 100 });
  try {
    const r = await post(`${h2.proxy.url}/v1/chat/completions`, MSG);
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'no_policy');
    const models = (await (await fetch(`${h2.proxy.url}/v1/models`)).json()) as any;
    assert.deepEqual(models.data, []);
  } finally {
    await h2.close();
  }
});

test('admin token and bad admin bodies', async () => {
  const h = await startHarness({ adminToken: 's3cret' });
  try {
    assert.equal((await post(`${h.proxy.url}/admin/policy`, P1)).status, 401);
    assert.equal((await fetch(`${h.proxy.url}/admin/policy`)).status, 401);
    const auth = { authorization: 'Bearer s3cret' };
    const cases: [unknown, RegExp][] = [
      [{ ...P1, switchId: undefined }, /switchId is required/],
      [{ ...P1, samplerPath: undefined, baseModel: undefined }, /samplerPath or baseModel/],
      [{ ...P1, renderer: 'chatml' }, /renderer must be one of/],
      [{ ...P1, sampling: { temperature: 3 } }, /sampling.temperature/],
      [{ ...P1, sampling: { maxTokens: 1.5 } }, /sampling.maxTokens must be an integer/],
      [{ ...P1, baseModel: 'gpt-4o', modelName: 'gpt-4o' }, /no tokenizer for model "gpt-4o"/],
      [{ ...P1, baseModel: undefined, modelName: 'local/x', renderer: 'qwen3' }, /needs <\|im_end\|>/],
    ];
    for (const [body, re] of cases) {
      const r = await post(`${h.proxy.url}/admin/policy`, body, auth);
      assert.equal(r.status, 400, r.text);
      assert.match(r.json.error.message, re);
    }
    const ok = await post(`${h.proxy.url}/admin/policy`, P1, auth);
    assert.equal(ok.status, 200);
    assert.equal((await fetch(`${h.proxy.url}/admin/policy`, { headers: auth })).status, 200);
    assert.equal(policy().switchId, 'p0');
  } finally {
    await h.close();
  }
});
