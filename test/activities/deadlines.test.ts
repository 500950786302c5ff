// Every remote call gives up: against a server that accepts connections and never answers, and one that sends
// headers and then stalls mid-body, each of our HTTP clients fails within its deadline instead of hanging.
// Plus a source check: every fetch() outside tests passes an AbortSignal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fetchJson } from '../../common/http';
import { StoreClient } from '../../store/client';
import { StoreSpanSink } from '../../proxy/span-sink';
import { getPolicy, switchPolicy } from '../../proxy/admin-client';
import { ServiceClient } from '../../tinker';
import { ROOT, sourceFiles } from '../helpers/sources';

const sockets = new Set<Socket>();
let silent: http.Server;
let stalling: http.Server;
let silentUrl = '';
let stallingUrl = '';

async function listen(handler: http.RequestListener): Promise<[http.Server, string]> {
  const server = http.createServer(handler);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
}

before(async () => {
  [silent, silentUrl] = await listen(() => {
    /* never answers */
  });
  [stalling, stallingUrl] = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"partial":'); // ...and nothing more
  });
});

after(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all([silent, stalling].map((s) => new Promise((r) => s.close(r))));
});

/** Fails with an error, within `withinMs`. */
async function givesUp(name: string, call: () => Promise<unknown>, withinMs: number): Promise<void> {
  const t0 = Date.now();
  await assert.rejects(call(), `${name} must fail`);
  const took = Date.now() - t0;
  assert.ok(took < withinMs, `${name} gave up after ${took} ms (limit ${withinMs})`);
}

for (const [kind, url] of [['never answers', () => silentUrl], ['stalls mid-body', () => stallingUrl]] as const) {
  test(`a server that ${kind}: every client gives up at its deadline`, { timeout: 60_000 }, async () => {
    const base = url();
    await givesUp('fetchJson', () => fetchJson(`${base}/x`, { timeoutMs: 300 }), 3000);
    const store = new StoreClient(base, { timeoutMs: 300, retryDelaysMs: [50] });
    await givesUp('StoreClient read (with one retry)', () => store.statistics(), 3000);
    await givesUp('StoreClient enqueue', () => store.enqueueRollout('task', { idempotencyKey: 'k' }), 3000);
    await givesUp('StoreClient long-poll wait', () => store.waitForRollouts(['ro-1'], 1, { timeoutMs: 300 }), 3000);
    const sink = new StoreSpanSink(base, { timeoutMs: 300 });
    await givesUp('proxy span sink: sequence id', () => sink.nextSequenceId('ro-1', 'at-1'), 3000);
    await givesUp('proxy admin client', () => getPolicy(base, { timeoutMs: 300 }), 3000);
    await givesUp('proxy admin switch', () => switchPolicy(base, { switchId: 's', modelName: 'm' }, { timeoutMs: 300 }), 3000);
    const tinker = new ServiceClient({ baseUrl: base, httpTimeoutMs: 300, retryBudgetMs: 1000 });
    try {
      await givesUp('tinker client (retries within its budget)', () => tinker.getServerCapabilities(), 5000);
    } finally {
      await tinker.close();
    }
  });
}

test('every fetch() in our code (outside tests) carries an AbortSignal, every httpRequest() a timeout', () => {
  const unbounded: string[] = [];
  let calls = 0;
  for (const file of sourceFiles()) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?<!function )\b(fetch|httpRequest)\(/g)) {
      // The call's arguments: up to the parenthesis that closes it.
      let depth = 0;
      let end = m.index! + m[1]!.length;
      for (; end < text.length; end++) {
        if (text[end] === '(') depth++;
        else if (text[end] === ')' && --depth === 0) break;
      }
      calls++;
      if (!(m[1] === 'fetch' ? /\bsignal\b/ : /\btimeoutMs\b/).test(text.slice(m.index!, end))) {
        unbounded.push(`${path.relative(ROOT, file)}:${text.slice(0, m.index!).split('\n').length}`);
      }
    }
  }
  assert.ok(calls >= 4, `found only ${calls} fetch calls; the scan is broken`);
  assert.deepEqual(unbounded, [], 'fetch calls without a deadline');
});
