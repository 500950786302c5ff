// `npm start -- --hosted --model M` runs the same stack against a Tinker service it does not start: the local
// trainer stands in for hosted Tinker (TINKER_BASE_URL points at it, and it accepts only the TINKER_API_KEY it was
// given), so the run trains only when the worker and the proxy both talk to that service with the key. With
// --keep-alive the stack stays up after the run: `client stop` ends the run, Ctrl-C the stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess } from '../../common/processes';
import { client, ROOT } from '../helpers/commands';
import { npmStart, npmStartEnv } from '../helpers/npm-start';

test('--hosted trains on the service TINKER_BASE_URL names, with TINKER_API_KEY; --keep-alive stays up after the run', { timeout: 900_000 }, async () => {
  const data = mkdtempSync(path.join(tmpdir(), 'agl-hosted-'));
  const key = `tml-${randomUUID()}`;
  const service = await startProcess({
    name: 'stand-in', command: process.execPath, args: ['--import', 'tsx', 'trainer/main.ts', '--port', '0', '--data', path.join(data, 'service')],
    cwd: ROOT, env: { ...process.env, AGL_TRAINER_TOKEN: key }, readyLine: /listening on (http:\/\/\S+)/, readyTimeoutMs: 60_000,
  });
  const url = service.match![1]!;
  const start = await npmStart(
    ['--hosted', '--model', 'local/tiny-test', '--keep-alive', '--data', path.join(data, 'state')],
    await npmStartEnv({ TINKER_BASE_URL: url, TINKER_API_KEY: key }),
  );
  try {
    await start.waitFor(new RegExp(`the hello example on local/tiny-test \\(hosted Tinker at ${url}\\)`));
    const [, temporal] = await start.waitFor(/Temporal (127\.0\.0\.1:\d+), store \S+, LLM proxy \S+, trainer (\S+)/);
    assert.match(start.proc.output(), new RegExp(`trainer ${url}\\n`), 'the stack uses the service, not a trainer of its own');
    assert.doesNotMatch(start.proc.output(), /starting trainer/);
    await start.waitFor(/started run agl-run-hello-local-tiny-test/);
    await start.waitFor(/\| batch 1\/20 \|/); // batch 0 is trained
    const stopped = await client(['stop', 'hello-local-tiny-test', '--address', temporal!]);
    assert.equal(stopped.code, 0, stopped.stderr);
    await start.waitFor(/hello-local-tiny-test: stopped after \d+\/20 batches/);
    await start.waitFor(/--keep-alive: everything stays up/);
    const status = await client(['status', 'hello-local-tiny-test', '--address', temporal!]);
    assert.match(status.stdout, /^hello-local-tiny-test: stopped after/, 'the stack is still up after the run');
    const runDir = path.join(data, 'state', 'runs', 'hello-local-tiny-test');
    const first = JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').split('\n')[0]!);
    assert.equal(first['env/all/by_group/frac_status_succeeded'], 1, 'every rollout sampled through the proxy from the service');
    assert.ok(first['env/all/total_ac_tokens'] > 0, 'and trained on the service');
    const config = JSON.parse(readFileSync(path.join(runDir, 'config.json'), 'utf8'));
    assert.equal(config.baseUrl, url);
    assert.equal(config.loraRank, 32);
    process.kill(start.proc.pid, 'SIGINT');
    assert.equal(await start.proc.exited, 130, 'Ctrl-C stops the stack');
  } finally {
    await start.proc.stop(15_000); // SIGTERM first: npm start then stops its stack (a SIGKILL would leave it running)
    await service.stop();
  }
});
