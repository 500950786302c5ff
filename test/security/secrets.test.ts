// No secret reaches Temporal history, logs or anything stored: a short real run (Temporal dev server, store,
// trainer, proxy, worker, runners as separate processes) with TINKER_API_KEY=tml-<random> and all access tokens
// in every process's environment; then the whole workflow history (every run of the chain), every process's
// output and every file the run left on disk are searched for each secret.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Stack } from '../../dev/stack';
import { localRunConfig } from '../helpers/local-run';
import { startOrAttach } from '../../cli/run-commands';
import { makeSecrets, startSecureStack } from '../helpers/secure-stack';

const secrets = makeSecrets();
let stack: Stack;
let dataDir: string;
let taskQueue: string;
let client: Client;

before(async () => {
  ({ stack, dataDir, taskQueue } = await startSecureStack('secrets', secrets, { runners: 4 }));
  client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
});

after(async () => {
  await client?.connection.close();
  await stack?.stop();
});

/** Every string in a decoded history, with bytes (payload data) read as UTF-8 and as base64. */
function flatten(value: unknown, out: string[] = []): string[] {
  if (value === null || value === undefined) return out;
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) {
    const b = Buffer.from(value);
    out.push(b.toString('utf8'), b.toString('latin1'), b.toString('base64'));
  } else if (Array.isArray(value)) for (const v of value) flatten(v, out);
  else if (typeof value === 'object') for (const v of Object.values(value as object)) flatten(v, out);
  else out.push(String(value));
  return out;
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    const st = statSync(full);
    if (st.isDirectory()) out.push(...files(full));
    else if (st.isFile()) out.push(full);
  }
  return out;
}

test('a real run leaves no secret in its history, its logs or its files', { timeout: 300_000 }, async () => {
  const cfg = localRunConfig(stack, dataDir, 'secrets', { maxTokens: 16, evalEvery: 1, saveEvery: 1, datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: ['1', '2', '3', '4'], valDataset: ['500'] } });
  const run = await startOrAttach(client, taskQueue, cfg);
  const result = await run.handle.result();
  assert.equal(result.batchesCompleted, 2, 'the run trained (so every activity ran with the secrets in its environment)');

  // Every run of the workflow id (continue-as-new makes more than one).
  const texts: [string, string][] = [];
  let runs = 0;
  for await (const w of client.workflow.list({ query: `WorkflowId = "${run.handle.workflowId}"` })) {
    runs++;
    const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
    assert.ok((history.events?.length ?? 0) > 10);
    texts.push([`history of run ${w.runId}`, flatten(history).join('\n')]);
  }
  assert.ok(runs >= 1);

  const processes = [stack.temporal.process, ...Object.values(stack.services).map((s) => s.process)].filter((p) => p !== undefined);
  assert.equal(processes.length, 6, 'temporal, store, trainer, proxy, worker, runners');
  for (const p of processes) texts.push([`output of ${p.name}`, p.output()]);
  assert.match(texts.find(([n]) => n === 'output of worker')![1], /worker polling task queue/, 'process output is captured');

  for (const file of files(dataDir)) texts.push([`file ${path.relative(dataDir, file)}`, readFileSync(file).toString('latin1')]);
  assert.ok(texts.some(([n]) => n.endsWith('metrics.jsonl')));

  // The search itself works: a payload carrying the key is found the same way.
  const control = flatten({ payloads: [{ data: new TextEncoder().encode(JSON.stringify({ apiKey: secrets.tinkerApiKey })) }] }).join('\n');
  assert.ok(control.includes(secrets.tinkerApiKey));

  const leaks: string[] = [];
  for (const [name, secret] of Object.entries(secrets)) {
    const forms = [secret, Buffer.from(secret).toString('base64').slice(0, -2)];
    for (const [where, text] of texts) if (forms.some((f) => text.includes(f))) leaks.push(`${name} in ${where}`);
  }
  assert.deepEqual(leaks, []);
  process.stdout.write(`# searched ${runs} workflow run(s), ${processes.length} process outputs, ${texts.length - runs - processes.length} files for ${Object.keys(secrets).length} secrets\n`);
});
