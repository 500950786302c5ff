// A service manager stops services with SIGTERM: each must close its server and exit 0, not die by the signal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess } from '../../common/processes';

const ROOT = path.resolve(__dirname, '..', '..');

const services: Array<[string, string[], string]> = [
  ['store', ['gateway/main.ts'], '/v1/agl/health'],
  ['trainer', ['trainer/main.ts', '--engine', 'bigram'], '/api/v1/healthz'],
  ['proxy', ['proxy/main.ts'], '/health'],
];

for (const [name, args, health] of services) {
  test(`${name} exits 0 on SIGTERM and stops listening`, async () => {
    const data = mkdtempSync(path.join(tmpdir(), `agl-${name}-term-`));
    const p = await startProcess({
      name, command: process.execPath, args: ['--import', 'tsx', ...args, '--port', '0', '--data', data],
      cwd: ROOT, readyLine: /listening on (http:\/\/\S+)/, readyTimeoutMs: 60_000,
    });
    const url = p.match![1]!;
    let code: unknown;
    try {
      assert.equal((await fetch(`${url}${health}`)).status, 200);
      process.kill(p.pid, 'SIGTERM');
      code = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('still running'), 20_000).unref())]);
    } finally {
      p.kill9(); // a no-op once it has exited
    }
    assert.equal(code, 0, `${name} output:\n${p.output().slice(-2000)}`);
    await assert.rejects(fetch(`${url}${health}`, { signal: AbortSignal.timeout(2_000) }));
  });
}
