// The supervisor as the chaos suite and `npm start` rely on it: a crashed service comes back by itself, and
// whenUp() holds a caller until it has (a request sent in between would find nothing listening).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Supervised } from '../../dev/supervisor';

const service = () =>
  new Supervised(
    {
      name: 'sleeper',
      command: process.execPath,
      args: ['-e', 'console.log("ready pid " + process.pid); setInterval(() => {}, 1000)'],
      readyLine: /ready pid (\d+)/,
    },
    () => undefined,
  );

test('whenUp resolves at once while the service runs', async () => {
  const s = await service().start();
  try {
    let settled = false;
    await Promise.race([s.whenUp().then(() => (settled = true)), new Promise((r) => setTimeout(r, 200))]);
    assert.equal(settled, true);
  } finally {
    await s.stop();
  }
});

test('after a crash whenUp waits for the restarted process, which is a new one', async () => {
  const s = await service().start();
  try {
    const before = s.process!.pid;
    s.crash();
    let back = false;
    const waiting = s.whenUp().then(() => (back = true));
    assert.equal(back, false, 'not up right after the kill');
    await waiting;
    assert.equal(s.restarts, 1);
    assert.notEqual(s.process!.pid, before, 'a new process answers');
    assert.equal(s.process!.match?.[1], String(s.process!.pid));
  } finally {
    await s.stop();
  }
});

/** A service that prints its URL as the stack's services do; it answers every request. */
const httpService = () =>
  new Supervised(
    {
      name: 'http',
      command: process.execPath,
      args: ['-e', 'const s = require("http").createServer((q, r) => r.end("ok")).listen(0, "127.0.0.1", () => console.log("http listening on http://127.0.0.1:" + s.address().port))'],
      readyLine: /listening on (http:\/\/\S+)/,
      liveness: { intervalMs: 200, deadMs: 1500 },
    },
    () => undefined,
  );

test('a service that stops answering (frozen with SIGSTOP) is killed and started again', async () => {
  const s = await httpService().start();
  try {
    const before = s.process!.pid;
    process.kill(before, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 100));
    await s.whenUp();
    while (s.process!.pid === before) await new Promise((r) => setTimeout(r, 100));
    await s.whenUp();
    assert.equal(s.hangs, 1);
    assert.equal(await (await fetch(s.process!.match![1]!)).text(), 'ok', 'the new process answers');
  } finally {
    await s.stop();
  }
});

test('a process without an address (a worker, runners) frozen for too long is started again; a busy one is left alone', async () => {
  const s = new Supervised({ ...service().spec, liveness: { intervalMs: 200, deadMs: 1500 } }, () => undefined);
  await s.start();
  try {
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(s.hangs, 0, 'running, not stopped: alive');
    const before = s.process!.pid;
    process.kill(before, 'SIGSTOP');
    while (s.process!.pid === before) await new Promise((r) => setTimeout(r, 100));
    await s.whenUp();
    assert.equal(s.hangs, 1);
    assert.equal(s.process!.match?.[1], String(s.process!.pid));
  } finally {
    await s.stop();
  }
});
