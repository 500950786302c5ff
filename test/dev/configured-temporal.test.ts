// `npm start` with a Temporal server configured (TEMPORAL_ADDRESS, or the address of an envconfig profile) uses that
// server or says why not: a configured address where nothing answers is an error naming the address and where it
// was configured, with nothing started (no dev server of its own on 7233 in its place). A configured address that
// is the very one npm start would start its dev server on is no substitution: the dev server is started there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../common/ports';
import { ensureTemporal } from '../../dev/temporal-server';
import { assertOneLine, runCommand } from '../helpers/commands';

const scratch = () => mkdtempSync(path.join(tmpdir(), 'agl-configured-temporal-'));

/** process.env with the Temporal settings given (and no profile file of the user's), for the duration of `fn`. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const keys = ['TEMPORAL_ADDRESS', 'TEMPORAL_PROFILE', 'TEMPORAL_CONFIG_FILE', 'TEMPORAL_TLS', 'TEMPORAL_API_KEY', 'TEMPORAL_NAMESPACE', ...Object.keys(vars)];
  const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
  for (const k of keys) delete process.env[k];
  process.env.TEMPORAL_CONFIG_FILE = path.join(scratch(), 'none.toml');
  for (const [k, v] of Object.entries(vars)) if (v !== undefined) process.env[k] = v;
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** ensureTemporal's error, or the server it returned (stopped, so a test that fails leaves nothing running). */
async function outcome(port: number): Promise<string> {
  try {
    const server = await ensureTemporal({ port, uiPort: 0 });
    await server.stop();
    return `started or used a server at ${server.address}${server.process ? ' (a dev server of its own)' : ''}`;
  } catch (err) {
    return (err as Error).message;
  }
}

test('TEMPORAL_ADDRESS where nothing answers: an error naming it, no dev server of its own', { timeout: 120_000 }, async () => {
  const [configured, own] = [await freePort(), await freePort()];
  const message = await withEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${configured}` }, () => outcome(own));
  assert.match(message, new RegExp(`^no Temporal server answers at 127\\.0\\.0\\.1:${configured}, which TEMPORAL_ADDRESS names: start it there, or unset TEMPORAL_ADDRESS`));
  assert.doesNotMatch(message, /\n/, 'one line');
});

test('a profile of the Temporal config file naming an address where nothing answers: an error naming the profile', { timeout: 120_000 }, async () => {
  const [configured, own] = [await freePort(), await freePort()];
  const file = path.join(scratch(), 'temporal.toml');
  writeFileSync(file, `[profile.lab]\naddress = "127.0.0.1:${configured}"\nnamespace = "default"\n`);
  const message = await withEnv({ TEMPORAL_PROFILE: 'lab' }, async () => {
    process.env.TEMPORAL_CONFIG_FILE = file;
    return outcome(own);
  });
  assert.match(message, new RegExp(`^no Temporal server answers at 127\\.0\\.0\\.1:${configured}, which profile lab of ${file.replace(/[.]/g, '\\.')} names: start it there`));
});

test('TEMPORAL_ADDRESS naming the port npm start starts its dev server on: the dev server is started there', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const message = await withEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` }, () => outcome(port));
  assert.equal(message, `started or used a server at 127.0.0.1:${port} (a dev server of its own)`);
});

test('npm start with TEMPORAL_ADDRESS where nothing answers: one line naming the address, exit 1, nothing started', { timeout: 120_000 }, async () => {
  const configured = await freePort();
  const data = scratch();
  const { TINKER_API_KEY: _k, TEMPORAL_PROFILE: _p, ...rest } = process.env;
  const env = {
    ...rest,
    TEMPORAL_ADDRESS: `127.0.0.1:${configured}`,
    TEMPORAL_CONFIG_FILE: path.join(data, 'none.toml'),
    TEMPORAL_PORT: '0', TEMPORAL_UI_PORT: '0', STORE_PORT: '0', TRAINER_PORT: '0', PROXY_PORT: '0',
  };
  // Code that starts a stack of its own here and trains is killed at 60 s and fails the checks below.
  const r = await runCommand('dev/main.ts', ['--data', data, '--runners', '0'], env, 60_000);
  assertOneLine(r, new RegExp(`^npm start: no Temporal server answers at 127\\.0\\.0\\.1:${configured}, which TEMPORAL_ADDRESS names`), 1);
  assert.equal(existsSync(path.join(data, 'temporal')), false, 'no dev server was started in its place');
  assert.doesNotMatch(r.stdout, /starting store/, 'nothing was started');
});
