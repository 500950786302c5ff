// One stack per data directory: while a stack holds it (here a separate process holding the lock, as a running
// `npm start` does), a second `npm start` on it is refused in one line naming the holder, before anything starts
// (no Temporal database is created); once the holder is killed (SIGKILL, no clean-up), the directory is free at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startProcess } from '../../common/processes';
import { lockDataDir } from '../../dev/data-dir-lock';
import { assertOneLine, ROOT, runCommand } from '../helpers/commands';

test('a second npm start on a data directory in use is refused with the reason; a killed holder frees it', { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agl-lock-'));
  const script = `require('${path.join(ROOT, 'dev/data-dir-lock.ts')}').lockDataDir(${JSON.stringify(dir)}, 'the holder of this test').then(() => { console.log('locked'); setInterval(() => {}, 1000); })`;
  const holder = await startProcess({ name: 'holder', command: process.execPath, args: ['--import', 'tsx', '-e', script], cwd: ROOT, readyLine: /^locked/m, readyTimeoutMs: 60_000 });
  try {
    const env = { ...process.env, TEMPORAL_PORT: '0', TEMPORAL_UI_PORT: '0', STORE_PORT: '0', TRAINER_PORT: '0', PROXY_PORT: '0', TEMPORAL_ADDRESS: '127.0.0.1:1' };
    const r = await runCommand('dev/main.ts', ['--data', dir, '--runners', '0'], env);
    assertOneLine(r, new RegExp(`^npm start: the data directory ${dir} is in use by the holder of this test, pid ${holder.pid} on ${os.hostname()}, since .*: two stacks on one directory would open the same Temporal and store databases`), 2);
    assert.equal(existsSync(path.join(dir, 'temporal')), false, 'nothing was started on the directory');
  } finally {
    holder.kill9();
    await holder.exited;
  }
  // The holder died without releasing: its lock is stale at once (its pid is gone), not after the 15 s expiry.
  const t0 = Date.now();
  const release = await lockDataDir(dir, 'the test');
  assert.ok(Date.now() - t0 < 10_000);
  await release();
});
