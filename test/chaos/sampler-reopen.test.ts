// A trainer that lost the proxy's sampling session (restart without its session file, expiry) answers 404: the
// proxy's sampler opens the session again from the sampler path and the call still succeeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TinkerApiError } from '../../tinker';
import type { SamplingClient } from '../../tinker';
import { TinkerSampler } from '../../proxy/tinker-sampler';
import { SamplerError } from '../../proxy/sampler';

const params = { numSamples: 1, maxTokens: 4, temperature: 1, topK: -1, topP: 1, stop: [] as number[], seed: 7, signal: new AbortController().signal };
const answer = { sequences: [{ tokens: [1, 2], logprobs: [-0.1, -0.2], stopReason: 'stop' as const }] };

function fakeClient(behaviour: () => Promise<typeof answer>, calls: { n: number }): SamplingClient {
  return { sample: async () => { calls.n++; return behaviour(); } } as unknown as SamplingClient;
}

test('a 404 for the sampling session reopens it from the sampler path and samples again', async () => {
  const lostCalls = { n: 0 };
  const freshCalls = { n: 0 };
  let reopened = 0;
  const lost = fakeClient(() => Promise.reject(new TinkerApiError(404, '/asample', '{"error":"unknown sampling_session_id \\"x\\"","category":"user"}')), lostCalls);
  const fresh = fakeClient(() => Promise.resolve(answer), freshCalls);
  const sampler = new TinkerSampler(lost, async () => { reopened++; return fresh; });
  assert.deepEqual(await sampler.sample([5], params), [{ tokens: [1, 2], logprobs: [-0.1, -0.2], stopReason: 'stop' }]);
  assert.equal(reopened, 1);
  // The fresh session is kept: the next call goes straight to it.
  await sampler.sample([5], params);
  assert.deepEqual([lostCalls.n, freshCalls.n, reopened], [1, 2, 1]);
});

test('other user errors are not retried and stay 400s', async () => {
  let reopened = 0;
  const bad = fakeClient(() => Promise.reject(new TinkerApiError(400, '/asample', '{"error":"max_tokens too large","category":"user"}')), { n: 0 });
  const sampler = new TinkerSampler(bad, async () => { reopened++; return bad; });
  await assert.rejects(sampler.sample([5], params), (err: unknown) => err instanceof SamplerError && err.status === 400 && !err.retryable);
  assert.equal(reopened, 0);
});
