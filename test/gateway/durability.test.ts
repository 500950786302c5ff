// A restart loses nothing of the 1.0 API: the store process (npm run store) is killed with -9 after the answers
// and started again on the same data directory; rollouts with their 1.0 status, the completion log and its
// cursor, events, model endpoints and the pause are all as they were acknowledged.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { startProcess, type ManagedProcess } from '../../common/processes';

const ROOT = path.resolve(__dirname, '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'agl-gateway-kill9-'));
let proc: ManagedProcess | undefined;

async function startStore(): Promise<(method: string, p: string, body?: unknown) => Promise<{ status: number; json: any }>> {
  proc = await startProcess({
    name: 'store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', dir],
    cwd: ROOT, readyLine: /listening on (http:\/\/\S+)/, readyTimeoutMs: 30_000,
  });
  const url = proc.match![1]!;
  return async (method, p, body) => {
    const res = await fetch(url + p, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
}

after(async () => {
  await proc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('kill -9 and restart: the 1.0 state is as acknowledged', async () => {
  let api = await startStore();
  await api('POST', '/api/rollouts', [{ rollout_id: 'a', input: { data_id: 'x' } }, { rollout_id: 'b', input: 2 }, { rollout_id: 'c', input: 3 }]);
  await api('PATCH', '/api/rollouts/b', { status: { state: 'running', last_attempt_id: '0', k8s_job_name: 'job-b' } });
  await api('POST', '/api/rollouts/b/attempt/0/events', { event_type: 'reward', data: { value: 0.5 } });
  await api('PATCH', '/api/rollouts/b', { status: { state: 'succeeded' } });
  await api('PATCH', '/api/rollouts/c', { status: { state: 'failed', error_message: 'spawn failed' } });
  await api('POST', '/api/models', [{ model: 'm', endpoint: 'http://vllm:8000/v1', version: 9 }]);
  await api('POST', '/proxy/pause', { retry_after_seconds: 3, reason: 'sync' });
  const before = {
    b: (await api('GET', '/api/rollouts/b')).json,
    c: (await api('GET', '/api/rollouts/c')).json,
    queued: (await api('GET', '/api/rollouts?state_in=queuing')).json,
    terminal: (await api('GET', '/api/rollouts/terminal')).json,
    events: (await api('GET', '/api/rollouts/b/events')).json,
  };
  assert.deepEqual(before.terminal.items.map((i: any) => i.rollout_id), ['b', 'c']);
  proc!.kill9();
  await proc!.exited;

  api = await startStore();
  assert.deepEqual((await api('GET', '/api/rollouts/b')).json, before.b);
  assert.deepEqual((await api('GET', '/api/rollouts/c')).json, before.c);
  assert.deepEqual((await api('GET', '/api/rollouts?state_in=queuing')).json, before.queued);
  assert.deepEqual((await api('GET', '/api/rollouts/terminal')).json, before.terminal);
  assert.deepEqual((await api('GET', '/api/rollouts/b/events')).json, before.events);
  assert.deepEqual((await api('GET', '/proxy/state')).json, { paused: true, retry_after_seconds: 3, reason: 'sync', inflight: 0 });
  const again = await api('POST', '/api/models', [{ model: 'm', endpoint: 'http://vllm:8000/v1', version: 10 }]);
  assert.equal(again.status, 201);
  // Enqueue stays idempotent across the restart, and the transitions stay final.
  assert.deepEqual((await api('POST', '/api/rollouts', [{ rollout_id: 'b', input: 'new' }])).json[0], before.b.rollout);
  assert.equal((await api('PATCH', '/api/rollouts/b', { status: { state: 'failed' } })).status, 409);
  await api('PATCH', '/api/rollouts/a', { status: { state: 'running' } });
  await api('PATCH', '/api/rollouts/a', { status: { state: 'succeeded' } });
  const page = (await api('GET', `/api/rollouts/terminal?after=${before.terminal.next_after}`)).json;
  assert.deepEqual(page, { items: [{ rollout_id: 'a', state: 'succeeded', data_id: 'x', is_train: true }], next_after: 3, total_terminal: 3 });
});
