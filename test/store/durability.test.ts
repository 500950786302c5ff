// An acknowledged write survives kill -9 of the store process: the standalone server (npm run store) is killed
// mid-stream and restarted on the same data directory; every acknowledged rollout, resource and span is there,
// and the queue still hands out the queued rollouts in order.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { StoreClient } from '../../store/client';
import { rewardSpan } from '../../store/reward-span';

const ROOT = path.resolve(__dirname, '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'agl-store-kill9-'));
let proc: ManagedProcess | undefined;

async function startStore(): Promise<{ proc: ManagedProcess; client: StoreClient }> {
  const p = await startProcess({
    name: 'store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', dir],
    cwd: ROOT, readyLine: /listening on (http:\/\/\S+)/, readyTimeoutMs: 30_000,
  });
  return { proc: p, client: new StoreClient(p.match![1]!, { retryDelaysMs: [] }) };
}

after(async () => {
  await proc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('acknowledged writes survive kill -9', async () => {
  let s = await startStore();
  proc = s.proc;
  const resources = await s.client.addResources({ main_llm: { resource_type: 'llm', endpoint: 'http://x', model: 'm', api_key: null, sampling_parameters: {} } });
  const acknowledged: string[] = [];
  const running = await s.client.startRollout('with-span', { workerId: 'w' });
  await s.client.addSpan(rewardSpan(running.rollout_id, running.attempt.attempt_id, 1, 0.5));
  // Enqueue concurrently and kill while requests are in flight; only acknowledged ones must survive.
  for (let i = 0; i < 100; i++) acknowledged.push((await s.client.enqueueRollout(i)).rollout_id);
  const inflight: Promise<void>[] = [];
  for (let i = 100; i < 300; i++) {
    inflight.push(s.client.enqueueRollout(i).then((r) => { acknowledged.push(r.rollout_id); }, () => {}));
  }
  setTimeout(() => s.proc.kill9(), 30);
  await Promise.all(inflight);
  await s.proc.exited;
  assert.ok(acknowledged.length >= 100, `acknowledged ${acknowledged.length}`);

  s = await startStore();
  proc = s.proc;
  const found = await s.client.queryRollouts({ rollout_id_in: acknowledged });
  assert.equal(found.total, acknowledged.length, 'every acknowledged rollout is stored');
  assert.equal((await s.client.getLatestResources())?.resources_id, resources.resources_id);
  const spans = await s.client.querySpans(running.rollout_id, 'latest');
  assert.equal(spans.total, 1);
  // The queue survived too: dequeue hands out queued rollouts in enqueue order.
  const ordered = (await s.client.queryRollouts({ status_in: ['queuing'] })).items.map((r) => r.rollout_id);
  const first = await s.client.dequeueRollout('after-restart');
  assert.equal(first?.rollout_id, ordered[0]);
});

test('a store restart does not retire live attempts: silence while it was down is not the runner\'s', async () => {
  await proc?.stop();
  let s = await startStore();
  proc = s.proc;
  const rollout = await s.client.startRollout('long-task', { workerId: 'w', config: { unresponsive_seconds: 5, max_attempts: 3, retry_condition: ['unresponsive'] } });
  const { rollout_id: rid } = rollout;
  const aid = rollout.attempt.attempt_id;
  await s.client.updateAttempt(rid, aid, { status: 'running', last_heartbeat_time: Date.now() / 1000 });
  s.proc.kill9();
  await s.proc.exited;
  await new Promise((r) => setTimeout(r, 6_000)); // down longer than unresponsive_seconds
  s = await startStore();
  proc = s.proc;
  await new Promise((r) => setTimeout(r, 2_000)); // two watchdog passes after the restart
  assert.equal((await s.client.getLatestAttempt(rid))?.status, 'running', 'the live attempt keeps running after the restart');
  await s.client.updateAttempt(rid, aid, { status: 'running', last_heartbeat_time: Date.now() / 1000 });
  // A runner that really went silent is still noticed.
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && (await s.client.getLatestAttempt(rid))?.status === 'running') await new Promise((r) => setTimeout(r, 250));
  assert.equal((await s.client.getLatestAttempt(rid))?.status, 'unresponsive');
  assert.equal((await s.client.getRolloutById(rid))?.status, 'requeuing');
});
