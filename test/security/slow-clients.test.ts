// A client that never finishes sending its request is answered 408 and let go, while a response that takes
// longer than that limit (a long-poll, a slow sample) is still served. Every service listens through the one
// server factory that sets these limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createServiceServer } from '../../common/http-server';
import { answerClientErrorsWithJson } from '../../common/client-error';
import { ROOT, sourceFiles } from '../helpers/sources';

const LIMIT_MS = 1500;

async function startServer() {
  const server = createServiceServer(
    (req, res) => {
      req.resume();
      // Answers well after the request limit, as a long-poll would.
      req.on('end', () => setTimeout(() => res.end('{"ok":true}'), 2 * LIMIT_MS));
    },
    { requestTimeoutMs: LIMIT_MS },
  );
  answerClientErrorsWithJson(server, (message) => ({ detail: message }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

test('a body that never arrives gets a 408 and a closed connection; a slow answer is still served', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer();
  try {
    const slow = await new Promise<{ reply: string; ms: number }>((resolve) => {
      const started = Date.now();
      let reply = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.write('POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{"a":'));
      socket.on('data', (d) => (reply += d.toString()));
      socket.on('close', () => resolve({ reply, ms: Date.now() - started }));
    });
    assert.match(slow.reply, /^HTTP\/1\.1 408 /);
    assert.match(slow.reply, /"detail":"malformed HTTP request: ERR_HTTP_REQUEST_TIMEOUT/);
    assert.ok(slow.ms < 20_000, `the connection was let go (after ${slow.ms} ms)`);

    const res = await fetch(`http://127.0.0.1:${port}/poll`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(20_000) });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('every HTTP server in our code is made by createServiceServer', () => {
  const direct: string[] = [];
  for (const file of sourceFiles()) {
    if (file.endsWith(path.join('common', 'http-server.ts'))) continue;
    const text = readFileSync(file, 'utf8');
    if (/\bhttps?\.createServer\(|import\s*\{[^}]*\bcreateServer\b[^}]*\}\s*from\s*'node:https?'/.test(text)) direct.push(path.relative(ROOT, file));
  }
  assert.deepEqual(direct, [], 'servers created without the request limits');
  const users = sourceFiles().filter((f) => !f.endsWith(path.join('common', 'http-server.ts')) && readFileSync(f, 'utf8').includes('createServiceServer('));
  assert.ok(users.length >= 3, `store, proxy and trainer use it (found ${users.map((f) => path.relative(ROOT, f))})`);
});
