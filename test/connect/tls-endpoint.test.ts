// Worker and client connect as Temporal users connect, through @temporalio/envconfig's standard settings, to a
// real TLS endpoint: Debian's nginx terminating TLS in front of a Temporal dev server (test/helpers/tls-front.ts),
// one server block requiring a client certificate from the test's CA, another requiring an API key. Each good
// connection is proved end to end (the real worker.ts process runs the health-check workflow that `client ping`
// starts) and in nginx's access log (the calls went through the endpoint); a wrong certificate or key is one line
// from worker and client, exit 1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { startDevServer, type TemporalServer } from '../../dev/temporal-server';
import { freePort } from '../../common/ports';
import { startProcess, type ManagedProcess } from '../../common/processes';
import { assertOneLine, client, ROOT, runCommand } from '../helpers/commands';
import { workflowBundle } from '../helpers/temporal';
import { ensureNginx, makeCerts, startTlsFront, type Certs, type TlsFront } from '../helpers/tls-front';

const API_KEY = `agl-test-key-${randomBytes(8).toString('hex')}`;
let dir = '';
let temporal: TemporalServer | undefined;
let front: TlsFront | undefined;
let certs: Certs;
let bundlePath = '';

/** The environment without any Temporal setting of the machine running the test, plus `extra`. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TEMPORAL_') && k !== 'AGL_TASK_QUEUE') env[k] = v;
  // No profile file of the machine's user either (an empty one): only what the test gives.
  env.TEMPORAL_CONFIG_FILE = path.join(dir, 'empty.toml');
  return { ...env, ...extra };
}

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'agl-tls-'));
  writeFileSync(path.join(dir, 'empty.toml'), '');
  const nginx = await ensureNginx();
  certs = await makeCerts(path.join(dir, 'certs'));
  temporal = await startDevServer({ port: await freePort(), uiPort: 0 });
  front = await startTlsFront(nginx, path.join(dir, 'nginx'), certs, temporal.address, API_KEY);
  const bundle = await workflowBundle();
  bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
});

after(async () => {
  await front?.stop();
  await temporal?.stop();
});

async function startWorker(env: NodeJS.ProcessEnv): Promise<ManagedProcess> {
  return startProcess({
    name: 'worker',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'worker.ts')],
    cwd: ROOT,
    env: { ...env, AGL_WORKFLOW_BUNDLE: bundlePath },
    readyLine: /worker polling task queue/,
    readyTimeoutMs: 120_000,
  });
}

/** Lines nginx logged for `address`'s port since `from` (byte offset). */
function logged(address: string, from: number): string[] {
  const port = address.split(':').pop();
  return readFileSync(front!.accessLog, 'utf8').slice(from).split('\n').filter((l) => l.startsWith(`${port} `));
}
const logSize = () => readFileSync(front!.accessLog, 'utf8').length;

/** A worker started with `env` runs the health-check workflow `client ping` starts with the same settings. */
async function pingThrough(env: NodeJS.ProcessEnv, address: string): Promise<void> {
  const from = logSize();
  const worker = await startWorker(env);
  try {
    assert.match(worker.output(), new RegExp(`polling task queue ${env.AGL_TASK_QUEUE} on ${address.replace(/\./g, '\\.')}`));
    const r = await client(['ping'], env);
    assert.equal(r.code, 0, `ping: ${r.stderr}`);
    const report = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.equal(report.workflowSawActivity, true);
    assert.equal(report.worker.pid, worker.pid, 'the health check ran on the worker started through the endpoint');
  } finally {
    await worker.stop();
  }
  // Both processes' calls went through nginx: the worker's polls and the client's start, answered by Temporal.
  const lines = logged(address, from);
  assert.ok(lines.some((l) => /PollWorkflowTaskQueue 200 grpc=(0|-)/.test(l)), `worker polls through the endpoint:\n${lines.join('\n')}`);
  assert.ok(lines.some((l) => /StartWorkflowExecution 200 grpc=(0|-)/.test(l)), `client start through the endpoint:\n${lines.join('\n')}`);
}

test('worker and client connect with an mTLS client certificate given by TEMPORAL_TLS_* variables', async () => {
  const env = cleanEnv({
    TEMPORAL_ADDRESS: front!.mtlsAddress,
    TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
    AGL_TASK_QUEUE: `tls-${randomUUID()}`,
  });
  await pingThrough(env, front!.mtlsAddress);
});

test('worker and client connect with an API key from a TEMPORAL_PROFILE in a TOML file', async () => {
  const toml = path.join(dir, 'temporal.toml');
  writeFileSync(
    toml,
    [
      '[profile.remote]',
      `address = "${front!.apiKeyAddress}"`,
      'namespace = "default"',
      `api_key = "${API_KEY}"`,
      '[profile.remote.tls]',
      `server_ca_cert_path = "${certs.caCert}"`,
      `server_name = "${certs.serverName}"`,
      '',
    ].join('\n'),
  );
  const env = cleanEnv({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'remote', AGL_TASK_QUEUE: `key-${randomUUID()}` });
  await pingThrough(env, front!.apiKeyAddress);
});

test('a certificate the endpoint does not trust is one line from the client and from the worker', async () => {
  const env = cleanEnv({
    TEMPORAL_ADDRESS: front!.mtlsAddress,
    TEMPORAL_TLS_CLIENT_CERT_PATH: certs.strangerCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certs.strangerKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
  });
  const r = await client(['list'], env);
  assertOneLine(r, new RegExp(`cannot connect to Temporal at ${front!.mtlsAddress} \\(mTLS\\): the TLS handshake failed: check TEMPORAL_TLS_CLIENT_CERT_PATH`));
  const w = await runCommand('worker.ts', [], env);
  assertOneLine(w, new RegExp(`^worker: cannot connect to Temporal at ${front!.mtlsAddress} \\(mTLS\\): the TLS handshake failed`));
});

test('a wrong API key is one line from the client and from the worker', async () => {
  const env = cleanEnv({
    TEMPORAL_ADDRESS: front!.apiKeyAddress,
    TEMPORAL_API_KEY: 'not-the-key',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
  });
  const r = await client(['list'], env);
  assertOneLine(r, /cannot connect to Temporal at .* \(TLS \+ API key\): the server refused the API key: check TEMPORAL_API_KEY/);
  const w = await runCommand('worker.ts', [], env);
  assertOneLine(w, /^worker: cannot connect to Temporal at .*: the server refused the API key/);
});

test('a profile that is not in the file is one line naming it (exit 2)', async () => {
  const env = cleanEnv({ TEMPORAL_PROFILE: 'nope' });
  assertOneLine(await client(['list'], env), /Temporal connection settings of profile nope/, 2);
  assertOneLine(await runCommand('worker.ts', [], env), /^worker: Temporal connection settings of profile nope/, 2);
});
