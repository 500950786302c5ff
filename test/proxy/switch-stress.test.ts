// Switches under load: every call succeeds, and no call that starts after a switch has returned is answered
// by an older policy. Uses the admin client the publishPolicy activity uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getPolicy, switchPolicy } from '../../proxy/admin-client';
import { post, startHarness } from './helpers';

test('switches during 300 concurrent calls: all answered, none by a stale policy', async () => {
  const h = await startHarness({ delayMs: 15, adminToken: 'tok' });
  try {
    const order = ['p0'];
    let done = 0; // index into `order` of the newest switch that has returned
    const failures: string[] = [];
    const calls = Array.from({ length: 300 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, (i * 7) % 400));
      const floor = done;
      const r = await post(`${h.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: `call ${i}` }] });
      if (r.status !== 200) failures.push(`call ${i}: ${r.status} ${r.text}`);
      const idx = order.indexOf(r.headers.get('x-agl-policy') ?? '');
      if (idx < floor) failures.push(`call ${i} started after switch ${order[floor]} but was answered by ${r.headers.get('x-agl-policy')}`);
    });
    for (let k = 1; k <= 5; k++) {
      await new Promise((r) => setTimeout(r, 60));
      const id = `batch-${k}`;
      order.push(id);
      const [a, b] = await Promise.all([
        switchPolicy(h.proxy.url, { switchId: id, modelName: 'local/tiny-hello', baseModel: 'local/tiny-hello', samplerPath: `tinker://m/sampler_weights/${k}` }, { token: 'tok' }),
        switchPolicy(h.proxy.url, { switchId: id, modelName: 'local/tiny-hello', baseModel: 'local/tiny-hello', samplerPath: `tinker://m/sampler_weights/${k}` }, { token: 'tok' }),
      ]);
      assert.equal(Number(a.switched) + Number(b.switched), 1, 'a duplicated switch request switches once');
      done = k;
    }
    await Promise.all(calls);
    assert.deepEqual(failures, []);
    const state = await getPolicy(h.proxy.url, { token: 'tok' });
    assert.equal(state.policy?.switchId, 'batch-5');
    assert.equal(state.switches, 6);
    assert.equal(state.inFlight, 0);
  } finally {
    await h.close();
  }
});
