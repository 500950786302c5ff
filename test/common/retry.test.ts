import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retry } from '../../common/retry';

const failing = (n: number, log: number[]) => async (attempt: number) => {
  log.push(attempt);
  if (attempt < n) throw new Error(`fail ${attempt}`);
  return 'ok';
};

test('tries again until the call succeeds', async () => {
  const log: number[] = [];
  assert.equal(await retry(failing(3, log), { firstPauseMs: 1, maxPauseMs: 2 }), 'ok');
  assert.deepEqual(log, [0, 1, 2, 3]);
});

test('retries bounds the tries; the last error is thrown as it is', async () => {
  const log: number[] = [];
  await assert.rejects(retry(failing(10, log), { firstPauseMs: 1, maxPauseMs: 1, retries: 2 }), /fail 2/);
  assert.deepEqual(log, [0, 1, 2]);
});

test('an error that may not be retried ends at once', async () => {
  const log: number[] = [];
  await assert.rejects(retry(failing(10, log), { firstPauseMs: 1, maxPauseMs: 1, retryable: () => false }), /fail 0/);
  assert.deepEqual(log, [0]);
});

test('no pause that would end past the deadline is taken', async () => {
  const log: number[] = [];
  await assert.rejects(retry(failing(100, log), { firstPauseMs: 1_000, maxPauseMs: 1_000, deadline: Date.now() + 500 }), /fail 0/);
  assert.deepEqual(log, [0]);
});

test('pauses double up to the cap', async () => {
  const log: number[] = [];
  const started = Date.now();
  await assert.rejects(retry(failing(100, log), { firstPauseMs: 20, maxPauseMs: 40, retries: 3 }), /fail 3/);
  // 20 + 40 + 40 ms (uncapped it would be 20 + 40 + 80).
  assert.deepEqual(log, [0, 1, 2, 3]);
  assert.ok(Date.now() - started >= 95, `${Date.now() - started} ms`);
});

test('an abort cuts the pause short and throws the last error', async () => {
  const ac = new AbortController();
  const log: number[] = [];
  const started = Date.now();
  setTimeout(() => ac.abort(), 30);
  await assert.rejects(retry(failing(100, log), { firstPauseMs: 10_000, maxPauseMs: 10_000, signal: ac.signal }), /fail 0/);
  assert.ok(Date.now() - started < 5_000);
  assert.deepEqual(log, [0]);
});
