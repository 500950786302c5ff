// Sampler retries (llmProxyRetryAttempts), the per-call deadline, and client disconnects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SamplerError } from '../../proxy/sampler';
import type { SampledSequence, SampleParams, Sampler, SamplerFactory } from '../../proxy/sampler';
import { startProxy } from '../../proxy/server';
import { policy, post } from './helpers';

class FlakySampler implements Sampler {
  calls = 0;
  constructor(private failures: number, private readonly retryable = true, private readonly delayMs = 0) {}
  async sample(_prompt: number[], p: SampleParams): Promise<SampledSequence[]> {
    this.calls++;
    if (this.delayMs) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, this.delayMs);
        p.signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(p.signal.reason);
        });
      });
    }
    if (this.failures-- > 0) throw new SamplerError('temporarily unavailable', this.retryable);
    const tokens = [...Buffer.from('ok\n\nUser:')];
    return Array.from({ length: p.numSamples }, () => ({ tokens, logprobs: tokens.map(() => -1), stopReason: 'stop' as const }));
  }
}

async function withProxy(sampler: Sampler, opts: { retryAttempts?: number; callTimeoutMs?: number }, fn: (url: string) => Promise<void>) {
  const factory: SamplerFactory = { create: async () => sampler };
  const p = await startProxy({ port: 0, factory, initialPolicy: policy(), log: () => {}, ...opts });
  try {
    await fn(p.url);
  } finally {
    await p.close();
  }
}

const BODY = { messages: [{ role: 'user', content: 'hi' }] };

test('retryable sampler errors are retried up to retryAttempts times', async () => {
  const s = new FlakySampler(2);
  await withProxy(s, { retryAttempts: 2 }, async (url) => {
    const r = await post(`${url}/v1/chat/completions`, BODY);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.choices[0].message.content, 'ok');
    assert.equal(s.calls, 3);
  });
  const s2 = new FlakySampler(2);
  await withProxy(s2, { retryAttempts: 1 }, async (url) => {
    const r = await post(`${url}/v1/chat/completions`, BODY);
    assert.equal(r.status, 502);
    assert.equal(r.json.error.code, 'sampler_error');
    assert.equal(r.headers.get('x-agl-policy'), 'p0', 'errors name the policy that failed the call');
    assert.equal(s2.calls, 2);
  });
});

test('the policy can set its own retryAttempts (the run\'s llmProxyRetryAttempts)', async () => {
  const s = new FlakySampler(2);
  const factory: SamplerFactory = { create: async () => s };
  const p = await startProxy({ port: 0, factory, initialPolicy: { ...policy(), retryAttempts: 2 }, log: () => {}, retryAttempts: 0 });
  try {
    assert.equal((await post(`${p.url}/v1/chat/completions`, BODY)).status, 200);
    assert.equal(s.calls, 3);
    const bad = await post(`${p.url}/admin/policy`, { switchId: 'x', modelName: 'local/x', baseModel: 'local/x', retryAttempts: 1.5 });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /retryAttempts must be an integer/);
  } finally {
    await p.close();
  }
});

test('non-retryable sampler errors are not retried', async () => {
  const s = new FlakySampler(1, false);
  await withProxy(s, { retryAttempts: 3 }, async (url) => {
    assert.equal((await post(`${url}/v1/chat/completions`, BODY)).status, 502);
    assert.equal(s.calls, 1);
  });
});

test('the per-call deadline answers 504 and aborts the sampler', async () => {
  const s = new FlakySampler(0, true, 2000);
  await withProxy(s, { callTimeoutMs: 150, retryAttempts: 3 }, async (url) => {
    const r = await post(`${url}/v1/chat/completions`, BODY);
    assert.equal(r.status, 504);
    assert.equal(r.json.error.type, 'timeout');
    assert.equal(s.calls, 1, 'no retry after the deadline');
  });
});

test('a client that goes away aborts its sampler call and frees its slot', async () => {
  const s = new FlakySampler(0, true, 3000);
  const factory: SamplerFactory = { create: async () => s };
  const p = await startProxy({ port: 0, factory, initialPolicy: policy(), log: () => {} });
  try {
    await assert.rejects(
      fetch(`${p.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(BODY), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(100) }),
    );
    for (let i = 0; i < 50 && p.policies.inFlightCalls() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(p.policies.inFlightCalls(), 0);
  } finally {
    await p.close();
  }
});

test('store down: a scoped call answers 503 before sampling; a span that cannot be written fails the call (503)', async () => {
  const s = new FlakySampler(0);
  const logged: string[] = [];
  const down = { nextSequenceId: async () => { throw new Error('connect ECONNREFUSED'); }, addSpan: async () => undefined };
  const p = await startProxy({ port: 0, factory: { create: async () => s }, sink: down, initialPolicy: policy(), log: (l) => logged.push(l) });
  try {
    const r = await post(`${p.url}/rollout/r1/attempt/a1/v1/chat/completions`, BODY);
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'store_unavailable');
    assert.equal(s.calls, 0);
    assert.equal((await post(`${p.url}/v1/chat/completions`, BODY)).status, 200, 'unscoped calls do not need the store');
  } finally {
    await p.close();
  }
  const flaky = { nextSequenceId: async () => 7, addSpan: async () => { throw new Error('store restarting'); } };
  const p2 = await startProxy({ port: 0, factory: { create: async () => s }, sink: flaky, initialPolicy: policy(), log: (l) => logged.push(l) });
  try {
    const r = await post(`${p2.url}/rollout/r1/attempt/a1/v1/chat/completions`, BODY);
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'store_unavailable');
    assert.match(r.json.error.message, /#7 was not recorded/);
    assert.ok(logged.some((l) => /span for r1\/a1 #7 was not recorded: store restarting/.test(l)), logged.join('\n'));
  } finally {
    await p2.close();
  }
});

test('close with a grace period lets an in-flight call finish', async () => {
  const s = new FlakySampler(0, true, 300);
  const p = await startProxy({ port: 0, factory: { create: async () => s }, initialPolicy: policy(), log: () => {} });
  const call = post(`${p.url}/v1/chat/completions`, BODY);
  await new Promise((r) => setTimeout(r, 50));
  await p.close(5000);
  const r = await call;
  assert.equal(r.status, 200);
  assert.equal(r.json.choices[0].message.content, 'ok');
});
