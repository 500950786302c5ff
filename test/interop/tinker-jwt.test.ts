// The JWT flow with both clients against the local trainer in its JWT mode (JWTs that live 2 s): each client
// trades its credential at POST /auth/token, sends the JWT on every other request, gets a fresh one after a pause
// longer than a JWT lives, replays a request the service rejected as `invalid_token`, and, where the service says
// `credential_default_source: credential_cmd`, trades the output of TINKER_CREDENTIAL_CMD instead of a key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ServiceClient, TinkerAuthError } from '../../tinker';
import { sleep } from '../../tinker/http';
import type { TrainerServer } from '../../trainer/server/server';
import { ensureVenv } from '../helpers/python';
import { TEST_MODEL, startTestTrainer, tempDir, textDatum } from '../tinker/helpers';
import { startRecordingProxy, type RecordingProxy } from '../tinker/recording-proxy';

const run = promisify(execFile);
const KEY = 'tml-jwt-test';
const LIFETIME_S = 2;
const PAUSE_S = 3;
const batch = [textDatum('Hello, world!\n')];

async function pythonSdk(url: string, env: Record<string, string | undefined>): Promise<{ result: string; same_loss?: boolean }> {
  const venv = await ensureVenv('tinker-sdk', ['tinker==0.38.0']);
  const clean: Record<string, string | undefined> = { ...process.env, TINKER_TELEMETRY: '0', ...env };
  for (const k of Object.keys(clean)) if (clean[k] === undefined) delete clean[k];
  const { stdout } = await run(venv.python, ['-W', 'ignore', path.join(__dirname, 'tinker-jwt-scenario.py'), url, TEST_MODEL, String(PAUSE_S)], {
    env: clean as NodeJS.ProcessEnv,
    timeout: 120_000,
  });
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

/** tinker-jwt-scenario.py with our client. */
async function ourClient(url: string, opts: { apiKey?: string; credentialCmd?: string }): Promise<{ result: string; same_loss?: boolean }> {
  try {
    const sc = new ServiceClient({ baseUrl: url, ...opts });
    const tc = await sc.createLoraTrainingClient(TEST_MODEL, { rank: 4, seed: 1 });
    const first = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
    await sleep(PAUSE_S * 1000);
    const second = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
    await sc.close('success');
    return { result: 'ok', same_loss: first === second };
  } catch (err) {
    return { result: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

const CLIENTS = [
  { name: 'the Python SDK 0.38', drive: (url: string, apiKey?: string, cmd?: string) => pythonSdk(url, { TINKER_API_KEY: apiKey, TINKER_CREDENTIAL_CMD: cmd }) },
  { name: 'our client', drive: (url: string, apiKey?: string, cmd?: string) => ourClient(url, { apiKey, credentialCmd: cmd }) },
];

function checkJwtTraffic(proxy: RecordingProxy, credential: string): void {
  const exchanges = proxy.calls('/auth/token', 'POST');
  assert.ok(exchanges.length >= 2, `a fresh JWT after the pause (${exchanges.length} exchanges)`);
  assert.ok(exchanges.every((r) => r.headers['x-api-key'] === credential && r.status === 200));
  const rest = proxy.records.filter((r) => r.path !== '/auth/token' && r.path !== '/client/config');
  assert.ok(rest.every((r) => String(r.headers['x-api-key']).startsWith('eyJ')), 'every other request carries a JWT');
}

describe('JWT mode, API key', () => {
  const tmp = tempDir('tinker-jwt-');
  let trainer: TrainerServer;
  before(async () => {
    trainer = await startTestTrainer({ dataDir: tmp.dir, token: KEY, jwtLifetimeSeconds: LIFETIME_S });
  });
  after(async () => {
    await trainer.close();
    tmp.remove();
  });

  for (const client of CLIENTS) {
    test(`${client.name}: exchanges its key, refreshes the JWT, replays an invalid_token 401 once`, { timeout: 150_000 }, async () => {
      const proxy = await startRecordingProxy(trainer.url);
      proxy.fault({ method: 'POST', path: '/create_model', times: 1, status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
      try {
        const r = await client.drive(proxy.url, KEY);
        assert.deepEqual(r, { result: 'ok', same_loss: true });
        checkJwtTraffic(proxy, KEY);
        assert.deepEqual(proxy.calls('/create_model').map((c) => c.status), [401, 200], 'replayed once with a new JWT');
        assert.notEqual(proxy.calls('/create_model')[0].headers['x-api-key'], proxy.calls('/create_model')[1].headers['x-api-key']);
      } finally {
        await proxy.close();
      }
    });
  }

  test('the trainer refuses a raw key where a JWT is due, and a forged JWT, as invalid_token', async () => {
    for (const key of [KEY, 'eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjk5OTk5OTk5OTl9.c2lnbmF0dXJl']) {
      const res = await fetch(`${trainer.url}/api/v1/create_session`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(5000) });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    }
  });
});

describe('JWT mode, credential command', () => {
  const tmp = tempDir('tinker-jwt-cmd-');
  const CMD_KEY = 'tml-from-credential-cmd';
  let trainer: TrainerServer;
  before(async () => {
    trainer = await startTestTrainer({ dataDir: tmp.dir, token: CMD_KEY, jwtLifetimeSeconds: LIFETIME_S, clientFlags: { credential_default_source: 'credential_cmd' } });
  });
  after(async () => {
    await trainer.close();
    tmp.remove();
  });

  for (const client of CLIENTS) {
    test(`${client.name}: trades the output of TINKER_CREDENTIAL_CMD`, { timeout: 150_000 }, async () => {
      const proxy = await startRecordingProxy(trainer.url);
      try {
        const r = await client.drive(proxy.url, undefined, `printf '%s\\n' ${CMD_KEY}`);
        assert.deepEqual(r, { result: 'ok', same_loss: true });
        checkJwtTraffic(proxy, CMD_KEY);
      } finally {
        await proxy.close();
      }
    });

    test(`${client.name}: without TINKER_CREDENTIAL_CMD it says the organization requires one`, { timeout: 60_000 }, async () => {
      const r = await client.drive(trainer.url, CMD_KEY);
      assert.match(r.result, /requires dynamic credentials — set TINKER_CREDENTIAL_CMD/);
    });
  }

  test('our client names the problem with a clear error class', async () => {
    const sc = new ServiceClient({ baseUrl: trainer.url, apiKey: CMD_KEY, credentialCmd: '' });
    await assert.rejects(sc.createLoraTrainingClient(TEST_MODEL), TinkerAuthError);
  });
});
