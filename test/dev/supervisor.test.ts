// The supervisor as the chaos suite and `npm start` rely on it: a crashed service comes back by itself, and
// whenUp() holds a caller until it has (a request sent in between would find nothing listening).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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

/** Whether a process is still running (a zombie waiting to be reaped counts as gone). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

test('what a dead process left in its group (a server\'s engine) is killed before it is started again', async () => {
  // The leader starts a child in its own process group, as SkyRL's API server starts its engine, and prints its pid.
  const s = new Supervised(
    {
      name: 'parent',
      command: process.execPath,
      args: ['-e', 'const c = require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }); console.log("child " + c.pid); setInterval(() => {}, 1000)'],
      readyLine: /child (\d+)/,
    },
    () => undefined,
  );
  await s.start();
  try {
    const leader = s.process!.pid;
    const child = Number(s.process!.match![1]);
    assert.ok(running(child));
    process.kill(leader, 'SIGKILL'); // the leader alone, not its group
    while (s.restarts === 0) await new Promise((r) => setTimeout(r, 50));
    await s.whenUp();
    const deadline = Date.now() + 5000;
    while (running(child) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(running(child), false, 'the old child is gone');
    assert.ok(running(Number(s.process!.match![1])), 'the new leader has its own child');
  } finally {
    await s.stop();
  }
});
