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
