// The defects route fuzzing found at the front doors, one test each, against the real servers:
// a 4xx naming the field (never a 500 from SQLite, never a retryable 503 for a bad id), no stack trace or source
// path in any error body, at most a short prefix of the input quoted back, one answer per request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestStore, type TestStore } from '../store/helpers';
import { startHarness, type Harness } from '../proxy/helpers';
import { startTrainerServer, type TrainerServer } from '../../trainer/server/server';
import { createBigramEngine } from '../../trainer/server/bigram-engine';
import { jsonOf, send } from './http-fuzz';

let store: TestStore;
let proxy: Harness;
let trainer: TrainerServer;
const trainerDir = mkdtempSync(path.join(os.tmpdir(), 'agl-front-doors-'));

before(async () => {
  store = await startTestStore();
  proxy = await startHarness({ withStore: true });
  trainer = await startTrainerServer({ engine: createBigramEngine(), dataDir: trainerDir, port: 0, log: () => {} });
});

after(async () => {
  await store?.close();
  await proxy?.close();
  await trainer?.close();
  rmSync(trainerDir, { recursive: true, force: true });
});

/** No stack trace, no absolute path of this machine, one line. */
function clean(text: string, where: string): void {
  assert.doesNotMatch(text, /\n\s+at |traceback|\.ts:\d+/i, `${where}: a stack trace in ${text.slice(0, 300)}`);
  assert.ok(!text.includes(path.resolve(__dirname, '..', '..')) && !text.includes(os.tmpdir() + '/'), `${where}: an absolute path in ${text.slice(0, 300)}`);
}

test('gateway: integers past what SQLite binds are a 422 naming the parameter, not a 500', async () => {
  for (const [p, field] of [
    ['/api/rollouts/terminal?limit=99999999999999999999', 'limit'],
    ['/api/rollouts/terminal?after=99999999999999999999', 'after'],
    ['/api/rollouts?state_in=queuing&limit=99999999999999999999', 'limit'],
    ['/api/rollouts?state_in=queuing&limit=-99999999999999999999', 'limit'],
  ] as const) {
    const a = await send(store.server.url, 'GET', p, {});
    assert.equal(a.status, 422, `${p}: ${a.text.slice(0, 300)}`);
    const detail = (jsonOf(a) as { detail: { loc: string[] }[] }).detail;
    assert.deepEqual(detail[0]!.loc, ['query', field], a.text);
    clean(a.text, p);
  }
});

test('store: a 500 carries one line, no stack trace and no source path', async () => {
  // An internal fault the store cannot help: its database handle closed under it.
  const t = await startTestStore();
  try {
    t.server.store.storeDb.db.close();
    const a = await send(t.server.url, 'GET', '/v1/agl/rollouts', {});
    assert.equal(a.status, 500, a.text);
    clean(a.text, 'a 500');
    assert.ok(typeof (jsonOf(a) as { detail: unknown }).detail === 'string', a.text);
  } finally {
    await t.close().catch(() => undefined);
  }
});

test('proxy: a rollout or attempt id of ".." or with a separator is a 400 naming it, never a retryable 503', async () => {
  const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
  for (const [p, headers, field] of [
    ['/rollout/../attempt/at-1/v1/chat/completions', {}, 'rollout'],
    ['/rollout/%2e%2e/attempt/at-1/v1/chat/completions', {}, 'rollout'],
    ['/rollout/%2E./attempt/at-1/v1/chat/completions', {}, 'rollout'],
    ['/rollout/ro-1/attempt/%2e%2e/v1/chat/completions', {}, 'attempt'],
    ['/rollout/a%2Fb/attempt/at-1/v1/chat/completions', {}, 'rollout'],
    ['/rollout/a%5Cb/attempt/at-1/v1/chat/completions', {}, 'rollout'],
    ['/v1/chat/completions', { 'x-rollout-id': '..', 'x-attempt-id': 'at-1' }, 'rollout'],
  ] as const) {
    const a = await send(proxy.proxy.url, 'POST', p, { 'content-type': 'application/json', ...headers }, body);
    assert.equal(a.status, 400, `${p} ${JSON.stringify(headers)}: ${a.text.slice(0, 300)}`);
    const e = (jsonOf(a) as { error: { message: string; code: string } }).error;
    assert.match(e.message, new RegExp(`${field} id`), a.text);
    assert.equal(e.code, 'invalid_id', a.text);
    clean(a.text, p);
  }
});

test('trainer: a 5 MB model_id or base_model is quoted back as a short prefix only', async () => {
  const big = 'x'.repeat(5_000_000);
  for (const [p, body, field] of [
    ['/api/v1/get_info', { model_id: big }, 'model_id'],
    ['/api/v1/create_model', { session_id: 's', model_seq_id: 0, base_model: big }, 'base'],
    ['/api/v1/asample', { sampling_session_id: big }, 'sampling_session_id'],
    ['/api/v1/load_weights', { model_id: big, path: 'tinker://x/weights/1' }, 'model_id'],
  ] as const) {
    const a = await send(trainer.url, 'POST', p, { 'content-type': 'application/json' }, JSON.stringify(body));
    assert.ok(a.status >= 400 && a.status < 500, `${p}: ${a.status}`);
    assert.ok(a.text.length < 1000, `${p}: a ${a.text.length}-byte error body`);
    assert.match(a.text, new RegExp(field), a.text);
    clean(a.text, p);
  }
});

/** Everything a server writes back on one connection for `bytes`, until it closes (or 2 s of silence). */
function allAnswers(url: string, bytes: Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const sock = net.connect(Number(port), hostname);
    let text = '';
    let timer = setTimeout(() => sock.destroy(), 2000);
    sock.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(() => sock.destroy(), 2000);
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    sock.write(bytes);
  });
}

test('one answer per request: a malformed chunked body after a routed request is not answered twice', async () => {
  for (const [name, url, target] of [
    ['store', store.server.url, '/nope'],
    ['store', store.server.url, '/v1/agl/health'],
    ['gateway', store.server.url, '/healthz'],
    ['proxy', proxy.proxy.url, '/nope'],
    ['proxy', proxy.proxy.url, '/health'],
    ['trainer', trainer.url, '/nope'],
    ['trainer', trainer.url, '/api/v1/healthz'],
  ] as const) {
    for (const method of ['GET', 'POST']) {
      const text = await allAnswers(url, Buffer.from(`${method} ${target} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`));
      const answers = text.match(/HTTP\/1\.1 \d{3}/g) ?? [];
      assert.equal(answers.length, 1, `${name} ${method} ${target}: ${answers.length} answers: ${text.slice(0, 600)}`);
    }
  }
});
