// The long-tail hello agent's delay: log-normal with p99 about 10x p50, the same for the same rollout every time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MEDIAN_MS, delaySeedOf, longTailDelayMs, medianFromEnv } from '../../agents/examples/hello-longtail';

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

test('over 20,000 seeds the delay has p50 near the median and p99/p50 between 8 and 12', () => {
  const median = 300;
  const delays = Array.from({ length: 20_000 }, (_, i) => longTailDelayMs(`seed:${i}`, median)).sort((a, b) => a - b);
  const p50 = quantile(delays, 0.5);
  const p99 = quantile(delays, 0.99);
  const ratio = p99 / p50;
  assert.ok(ratio >= 8 && ratio <= 12, `p99/p50 = ${ratio.toFixed(2)} (p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms)`);
  assert.ok(Math.abs(p50 / median - 1) < 0.05, `p50 ${p50.toFixed(1)} ms is within 5% of the ${median} ms median`);
  assert.ok(delays[0]! > 0, 'every delay is positive');
  assert.ok(delays.at(-1)! <= median * 90, 'the clipped tail stays under 90x the median');
});

test('the delay is deterministic per seed and differs between seeds', () => {
  for (const seed of ['seed:1', 'seed:123456', 'rollout:ro-abc', 42]) assert.equal(longTailDelayMs(seed, 300), longTailDelayMs(seed, 300));
  assert.notEqual(longTailDelayMs('seed:1', 300), longTailDelayMs('seed:2', 300));
  // The median only scales the draw.
  assert.ok(Math.abs(longTailDelayMs('seed:7', 600) - 2 * longTailDelayMs('seed:7', 300)) < 1e-9);
  assert.equal(longTailDelayMs('seed:7', 0), 0);
});

test('a rollout is seeded by its sampling_seed, else by its id, so a retry waits the same time', () => {
  assert.equal(delaySeedOf({ rollout_id: 'ro-1', metadata: { sampling_seed: 17 } }), 'seed:17');
  // Two rollouts with the same sampling seed (a rerun of the same config) wait the same.
  assert.equal(delaySeedOf({ rollout_id: 'ro-2', metadata: { sampling_seed: 17 } }), 'seed:17');
  assert.equal(delaySeedOf({ rollout_id: 'ro-1', metadata: null }), 'rollout:ro-1');
  assert.equal(delaySeedOf({ rollout_id: 'ro-1', metadata: { other: true } }), 'rollout:ro-1');
});

test('AGL_LONGTAIL_MEDIAN_MS sets the median; a bad value is refused with the reason', () => {
  assert.equal(medianFromEnv({}), DEFAULT_MEDIAN_MS);
  assert.equal(medianFromEnv({ AGL_LONGTAIL_MEDIAN_MS: '1200' }), 1200);
  assert.equal(medianFromEnv({ AGL_LONGTAIL_MEDIAN_MS: '0' }), 0);
  assert.throws(() => medianFromEnv({ AGL_LONGTAIL_MEDIAN_MS: 'fast' }), /AGL_LONGTAIL_MEDIAN_MS/);
  assert.throws(() => medianFromEnv({ AGL_LONGTAIL_MEDIAN_MS: '-5' }), /non-negative/);
});
