// `npm start` answers a mistake with one line naming it and a non-zero exit code before it starts anything: an
// unknown option, --hosted without what hosted Tinker needs, and a second npm start while one runs (its store
// holds the port). Each is run as `npm start` runs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess } from '../../common/processes';
import { assertOneLine, ROOT, runCommand } from '../helpers/commands';

const start = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const { TINKER_API_KEY: _k, TINKER_CREDENTIAL_CMD: _c, TEMPORAL_ADDRESS: _a, ...rest } = process.env;
  return runCommand('dev/main.ts', args, { ...rest, ...env });
};

test('--help lists the options and starts nothing', async () => {
  const r = await start(['--help']);
  assert.equal(r.code, 0, r.stderr);
  for (const option of ['--example', '--runners', '--model', '--hosted', '--keep-alive', '--fresh', '--data']) assert.match(r.stdout, new RegExp(`\\n  ${option}\\b`));
});

test('an unknown option, a bad --runners, an unknown example', async () => {
  assertOneLine(await start(['--bogus']), /^npm start: unknown option --bogus \(npm start -- --help lists the options\)$/, 2);
  assertOneLine(await start(['--runners', 'many']), /^npm start: --runners must be a whole number/, 2);
  assertOneLine(await start(['--example', 'chess']), /^npm start: --example must be one of hello, .*got "chess"$/, 2);
  assertOneLine(await start(['--model', 'Qwen/Qwen3-8B']), /^npm start: Qwen\/Qwen3-8B is not a model of the local trainer .* add --hosted/, 2);
});

test('--hosted without the key or a model names what is missing', async () => {
  assertOneLine(await start(['--hosted']), /^npm start --hosted: TINKER_API_KEY is not set .*; --model is not given/, 2);
  assertOneLine(await start(['--hosted', '--model', 'Qwen/Qwen3-8B']), /^npm start --hosted: TINKER_API_KEY is not set [^;]*$/, 2);
  assertOneLine(await start(['--hosted'], { TINKER_API_KEY: 'tml-test' }), /^npm start --hosted: --model is not given/, 2);
});

test('a second npm start while one runs: its store holds the port', async () => {
  const data = mkdtempSync(path.join(tmpdir(), 'agl-start-twice-'));
  const store = await startProcess({
    name: 'store', command: process.execPath, args: ['--import', 'tsx', 'gateway/main.ts', '--port', '0', '--data', data],
    cwd: ROOT, readyLine: /listening on http:\/\/127\.0\.0\.1:(\d+)/, readyTimeoutMs: 60_000,
  });
  try {
    const port = store.match![1]!;
    const r = await start(['--data', data], { STORE_PORT: port, TEMPORAL_PORT: '0', TEMPORAL_UI_PORT: '0', TRAINER_PORT: '0', PROXY_PORT: '0' });
    assertOneLine(r, new RegExp(`^npm start: 127\\.0\\.0\\.1:${port}, the store's port, is already in use: another npm start is probably running`), 2);
  } finally {
    await store.stop();
  }
});
