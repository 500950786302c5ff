// The store does not count its own stall against runners: a store process frozen (SIGSTOP) for longer than an
// attempt's unresponsive_seconds, then resumed, gives the attempt a full window from the moment it resumed instead
// of retiring it as unresponsive at once (it retired 10 live attempts after a 150-second freeze). A runner that
// stays silent after that is still noticed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { StoreClient } from '../../store/client';
import { StallClock } from '../../store/stall-clock';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let store: ManagedProcess | undefined;
after(async () => {
  await store?.stop();
});

test('the stall clock moves the start of runner silence to the end of a stall, and only then', () => {
  let now = 1_000_000;
  const clock = new StallClock(1000, () => now);
  now += 1000;
  assert.equal(clock.tick(), 0);
  now += 2500; // a busy tick: late, but not a stall
  assert.equal(clock.tick(), 0);
  assert.equal(clock.servingSince, 1_000_000 / 1000);
  now += 150_000; // frozen
  assert.equal(clock.tick(), 150_000);
  assert.equal(clock.servingSince, now / 1000);
});

test('a store frozen past unresponsive_seconds, then resumed, keeps the attempt running; silence after that still counts', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-stall-'));
  store = await startProcess({
    name: 'store', command: process.execPath, args: ['--import', 'tsx', path.join(__dirname, '..', '..', 'gateway', 'main.ts'), '--port', '0', '--data', dir],
    readyLine: /listening on (http:\/\/\S+)/,
  });
  const client = new StoreClient(store.match![1]!, { retryDelaysMs: [200, 400, 800] });
  const r = await client.enqueueRollout('x', { config: { unresponsive_seconds: 3, max_attempts: 1, retry_condition: [] } });
  const attempt = (await client.dequeueRollout('runner-1'))!;
  await client.updateAttempt(r.rollout_id, attempt.attempt.attempt_id, { status: 'running', last_heartbeat_time: Date.now() / 1000 });

  process.kill(store.pid, 'SIGSTOP');
  await sleep(6_000); // twice unresponsive_seconds, during which no heartbeat can land
  process.kill(store.pid, 'SIGCONT');
  await sleep(1_500); // the watchdog (every second) has looked since
  assert.equal((await client.getRolloutById(r.rollout_id))?.status, 'running', 'the store\'s own stall is not the runner\'s silence');
  assert.match(store.output(), /the store was stalled for \d+\.\d s/);

  await sleep(4_000); // now the runner really is silent for longer than 3 s
  assert.equal((await client.getRolloutById(r.rollout_id))?.status, 'failed', 'a silent runner is still noticed');
});
