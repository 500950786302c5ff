// Access control of the real service processes: they bind 127.0.0.1 unless told otherwise; with a token in
// their environment the store, the proxy's admin endpoint and the local trainer answer 401 without it and 200
// with it; our clients send it (StoreClient, the proxy's span sink, the Tinker client); the proxy refuses to
// start on a non-loopback address without an admin token (exit 2, a clear message), and so do the store and the
// trainer without theirs, unless told the network is trusted (--trusted-network, AGL_TRUSTED_NETWORK=1).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { freePort } from '../../common/ports';
import { isLoopbackHost } from '../../common/access';
import { StoreClient } from '../../store/client';
import { ServiceClient } from '../../tinker';

const ROOT = path.resolve(__dirname, '../..');
const LISTENING = /listening on (http:\/\/\S+)/;
const STORE_TOKEN = 'store-secret-1';
const ADMIN_TOKEN = 'admin-secret-2';
const TRAINER_TOKEN = 'tml-trainer-secret-3';
const procs: ManagedProcess[] = [];
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agl-access-'));
let storeUrl = '';
let trainerUrl = '';
let proxyUrl = '';

function clean(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const e = { ...process.env };
  for (const k of ['AGL_STORE_TOKEN', 'AGL_PROXY_ADMIN_TOKEN', 'AGL_TRAINER_TOKEN', 'TINKER_API_KEY', 'STORE_HOST', 'PROXY_HOST', 'TRAINER_HOST', 'AGL_TRUSTED_NETWORK']) delete e[k];
  return { ...e, ...env };
}

async function service(name: string, file: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const p = await startProcess({ name, command: process.execPath, args: ['--import', 'tsx', path.join(ROOT, file), ...args], cwd: ROOT, env: clean(env), readyLine: LISTENING, readyTimeoutMs: 60_000 });
  procs.push(p);
  return p.match![1]!;
}

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, signal: AbortSignal.timeout(10_000) });

before(async () => {
  // No --host anywhere: the default must be loopback.
  storeUrl = await service('store', 'gateway/main.ts', ['--port', '0', '--data', path.join(dataDir, 'store')], { AGL_STORE_TOKEN: STORE_TOKEN });
  trainerUrl = await service('trainer', 'trainer/main.ts', ['--port', '0', '--data', path.join(dataDir, 'trainer'), '--engine', 'bigram'], { AGL_TRAINER_TOKEN: TRAINER_TOKEN });
  proxyUrl = await service('proxy', 'proxy/main.ts', ['--port', '0', '--data', path.join(dataDir, 'proxy'), '--store', storeUrl, '--trainer', trainerUrl], {
    AGL_PROXY_ADMIN_TOKEN: ADMIN_TOKEN,
    AGL_STORE_TOKEN: STORE_TOKEN,
    TINKER_API_KEY: TRAINER_TOKEN,
  });
});

after(async () => {
  for (const p of procs.reverse()) await p.stop();
});

test('services bind 127.0.0.1 by default', () => {
  for (const url of [storeUrl, trainerUrl, proxyUrl]) assert.equal(new URL(url).hostname, '127.0.0.1', url);
  assert.equal(isLoopbackHost('0.0.0.0'), false);
  assert.equal(isLoopbackHost('::'), false);
  assert.equal(isLoopbackHost('192.168.1.10'), false);
  for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) assert.equal(isLoopbackHost(h), true, h);
});

test('store: 401 without the token, 200 with it; StoreClient sends it', async () => {
  assert.equal((await get(`${storeUrl}/v1/agl/rollouts`)).status, 401);
  assert.equal((await get(`${storeUrl}/v1/agl/rollouts`, { authorization: 'Bearer wrong' })).status, 401);
  assert.equal((await get(`${storeUrl}/v1/agl/rollouts`, { authorization: `Bearer ${STORE_TOKEN}` })).status, 200);
  await assert.rejects(new StoreClient(storeUrl, { token: '', retryDelaysMs: [] }).statistics(), /HTTP 401/);
  const saved = process.env.AGL_STORE_TOKEN;
  process.env.AGL_STORE_TOKEN = STORE_TOKEN;
  try {
    assert.equal(typeof (await new StoreClient(storeUrl).statistics()).total_rollouts, 'number', 'the token comes from AGL_STORE_TOKEN');
  } finally {
    if (saved === undefined) delete process.env.AGL_STORE_TOKEN;
    else process.env.AGL_STORE_TOKEN = saved;
  }
});

test('trainer: 401 without the token, 200 with Bearer or X-API-Key; the Tinker client sends it', async () => {
  const caps = `${trainerUrl}/api/v1/get_server_capabilities`;
  assert.equal((await get(caps)).status, 401);
  assert.equal((await get(caps, { 'x-api-key': 'tml-wrong' })).status, 401);
  assert.equal((await get(caps, { authorization: `Bearer ${TRAINER_TOKEN}` })).status, 200);
  assert.equal((await get(caps, { 'x-api-key': TRAINER_TOKEN })).status, 200);
  const anon = new ServiceClient({ baseUrl: trainerUrl, apiKey: '', retryBudgetMs: 1000 });
  const keyed = new ServiceClient({ baseUrl: trainerUrl, apiKey: TRAINER_TOKEN });
  try {
    await assert.rejects(anon.getServerCapabilities(), /401/);
    assert.ok((await keyed.getServerCapabilities()).length > 0);
  } finally {
    await anon.close();
    await keyed.close();
  }
});

test('proxy admin: 401 without the token, 200 with it; chat needs none; the span sink sends the store token', async () => {
  assert.equal((await get(`${proxyUrl}/admin/policy`)).status, 401);
  assert.equal((await get(`${proxyUrl}/admin/policy`, { authorization: `Bearer ${STORE_TOKEN}` })).status, 401);
  const switched = await fetch(`${proxyUrl}/admin/policy`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ switchId: 'access-1', modelName: 'local/bigram', baseModel: 'local/bigram', renderer: 'role_colon' }),
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(switched.status, 200, await switched.text());
  // A rollout-scoped call: the proxy (which got the trainer key as TINKER_API_KEY) samples from the trainer and
  // writes its span to the store with AGL_STORE_TOKEN.
  const store = new StoreClient(storeUrl, { token: STORE_TOKEN });
  const r = await store.startRollout('hi', { workerId: 'w' });
  const chat = await fetch(`${proxyUrl}/rollout/${r.rollout_id}/attempt/${r.attempt.attempt_id}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(chat.status, 200, await chat.text());
  assert.equal((await store.querySpans(r.rollout_id, null)).total, 1, 'the span reached the token-protected store');
});

test('the proxy refuses to start on a non-loopback address without an admin token (exit 2)', async () => {
  const port = await freePort();
  const p = await startProcess({
    name: 'proxy-open',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'proxy/main.ts'), '--host', '0.0.0.0', '--port', String(port), '--data', path.join(dataDir, 'proxy-open')],
    cwd: ROOT,
    env: clean({}),
  });
  procs.push(p);
  assert.equal(await p.exited, 2);
  assert.match(p.output(), /refusing to listen on 0\.0\.0\.0 .*without AGL_PROXY_ADMIN_TOKEN/);
  // With a token it starts on the same address.
  const url = await service('proxy-open-token', 'proxy/main.ts', ['--host', '0.0.0.0', '--port', String(port), '--data', path.join(dataDir, 'proxy-open')], { AGL_PROXY_ADMIN_TOKEN: ADMIN_TOKEN });
  assert.match(url, /0\.0\.0\.0/);
  assert.equal((await get(`http://127.0.0.1:${port}/admin/policy`)).status, 401);
});

test('bound beyond loopback without their token, store, trainer and proxy refuse to start naming the token and the trusted-network switch; told the network is trusted, they start with a warning', async () => {
  const services = [
    ['store', 'gateway/main.ts', [], 'AGL_STORE_TOKEN'],
    ['trainer', 'trainer/main.ts', ['--engine', 'bigram'], 'AGL_TRAINER_TOKEN'],
    ['proxy', 'proxy/main.ts', [], 'AGL_PROXY_ADMIN_TOKEN'],
  ] as const;
  for (const [name, file, extra, tokenEnv] of services) {
    const args = ['--import', 'tsx', path.join(ROOT, file), '--host', '0.0.0.0', '--port', '0', '--data', path.join(dataDir, `${name}-open`), ...extra];
    const refused = await startProcess({ name: `${name}-open`, command: process.execPath, args, cwd: ROOT, env: clean({}) });
    procs.push(refused);
    assert.equal(await refused.exited, 2, `${name}: ${refused.output()}`);
    const lines = refused.output().trim().split('\n');
    assert.equal(lines.length, 1, `${name}: one line:\n${refused.output()}`);
    assert.match(lines[0]!, new RegExp(`^${name}: refusing to listen on 0\\.0\\.0\\.0 \\(not a loopback address\\) without ${tokenEnv}: .*--trusted-network or AGL_TRUSTED_NETWORK=1`));
    // The flag and the variable each say the network is trusted.
    for (const [how, argv, env] of [['flag', [...args, '--trusted-network'], {}], ['env', args, { AGL_TRUSTED_NETWORK: '1' }]] as const) {
      const p = await startProcess({ name: `${name}-trusted-${how}`, command: process.execPath, args: [...argv], cwd: ROOT, env: clean(env), readyLine: LISTENING, readyTimeoutMs: 60_000 });
      procs.push(p);
      assert.match(p.output(), new RegExp(`${name}: WARNING: listening on 0\\.0\\.0\\.0 .*without ${tokenEnv}, as AGL_TRUSTED_NETWORK/--trusted-network allows`));
      await p.stop();
    }
  }
});
