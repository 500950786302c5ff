// A trainer checkpoint whose files changed on disk since it was saved is refused, not loaded. A real
// trainer (in-process, the local engine) saves a state and sampler weights; one byte of one file of a checkpoint is
// changed; every way of loading it (a new model from the state, load_weights into a live model, a sampling session on
// sampler weights) is answered at once with one line that names the tinker:// path and the file, as a user error:
// never loaded, never a 500 that a client retries. Intact checkpoints next to it still load, and the trainer keeps
// serving. optimizer.bin is the file no other check covers (the engine checks only the weights' hash): without the
// checksums of checkpoint.json the damaged optimizer state loads silently.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RequestFailedError, ServiceClient, TinkerApiError, type TrainingClient } from '../../tinker';
import type { TrainerServer } from '../../trainer/server/server';
import { parseTinkerPath, type TinkerPath } from '../../trainer/server/checkpoints';
import { TEST_MODEL, startTestTrainer, tempDir, textDatum } from '../tinker/helpers';

const tmp = tempDir('trainer-damaged-');
const log: string[] = [];
let server: TrainerServer;
let client: ServiceClient;
let tc: TrainingClient;
let statePath = '';
let samplerPath = '';
const batch = [textDatum('Hello, world!\n')];

/** The directory of a checkpoint on the trainer's disk (<data>/runs/<model_id>/<kind>/<name>). */
const dirOf = (p: TinkerPath) => path.join(tmp.dir, 'runs', p.modelId, p.kind, p.name);

/** Changes one byte in the middle of `file` of the checkpoint at `uri`, as a bad disk or a stray write would. */
function damage(uri: string, file: string): void {
  const full = path.join(dirOf(parseTinkerPath(uri)), file);
  const bytes = readFileSync(full);
  bytes[bytes.length >> 1] ^= 0x01;
  writeFileSync(full, bytes);
}

/** A copy of the checkpoint at `uri` under another name (same run), made before any damage: `tinker://…/<name>`. */
function copyCheckpoint(uri: string, name: string): string {
  const p = parseTinkerPath(uri);
  cpSync(dirOf(p), dirOf({ ...p, name }), { recursive: true });
  return uri.replace(/[^/]+$/, name);
}

/** The refusal a load got, checked for what the operator reads: one line naming the checkpoint and its damaged file. */
function checkRefusal(err: unknown, uri: string, file: string): string {
  const text = err instanceof TinkerApiError ? err.body : (err as Error).message;
  assert.ok(err instanceof TinkerApiError || err instanceof RequestFailedError, `a refusal from the trainer, got ${String(err)}`);
  assert.ok(err instanceof TinkerApiError ? err.isUserError : err.isUserError, `a user error (not retried), got ${err instanceof TinkerApiError ? err.status : err.category}: ${text}`);
  if (err instanceof TinkerApiError) assert.equal(err.status, 422, text);
  const message = err instanceof TinkerApiError ? (JSON.parse(err.body) as { error: string }).error : text;
  assert.ok(!message.includes('\n'), `one line: ${message}`);
  assert.ok(message.length < 400, `short: ${message}`);
  assert.ok(message.includes(`checkpoint ${uri} is damaged`), `names the checkpoint ${uri}: ${message}`);
  assert.ok(message.includes(file), `names the file ${file}: ${message}`);
  assert.match(message, /was not loaded/);
  assert.ok(!message.includes(tmp.dir), `no path of the trainer's machine: ${message}`);
  return message;
}

before(async () => {
  server = await startTestTrainer({ dataDir: tmp.dir, port: 0, log: (l) => log.push(l) });
  client = new ServiceClient({ baseUrl: `http://127.0.0.1:${server.port}`, apiKey: 'tml-local', futureTimeoutMs: 60_000 });
  tc = await client.createLoraTrainingClient(TEST_MODEL, { seed: 4 });
  await tc.forwardBackward(batch, 'cross_entropy');
  await tc.optimStep({ learningRate: 0.1 });
  statePath = await tc.saveState('step-1');
  samplerPath = await tc.saveWeightsForSampler('step-1');
});

after(async () => {
  await client?.close().catch(() => undefined);
  await server?.close();
  tmp.remove();
});

test('a state whose optimizer.bin changed by one byte is refused, naming it; an intact copy loads', { timeout: 120_000 }, async () => {
  const intact = copyCheckpoint(statePath, 'step-1-copy');
  const lossBefore = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
  damage(statePath, 'optimizer.bin');

  const started = Date.now();
  const err = await client.createTrainingClientFromState(statePath, { withOptimizer: true }).then(() => 'loaded', (e: unknown) => e);
  const ms = Date.now() - started;
  assert.notEqual(err, 'loaded', 'the damaged state was loaded');
  const message = checkRefusal(err, statePath, 'optimizer.bin');
  assert.ok(ms < 5_000, `refused at once, not retried (${ms} ms)`);
  process.stderr.write(`refused in ${ms} ms: ${message}\n`);

  // Into a live model too (load_weights with model_id: the refusal comes as the future's error).
  const into = await tc.loadStateWithOptimizer(statePath).then(() => 'loaded', (e: unknown) => e);
  assert.notEqual(into, 'loaded', 'the damaged state was loaded into a live model');
  checkRefusal(into, statePath, 'optimizer.bin');
  assert.equal((await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'], lossBefore, 'the live model kept its weights');

  // The copy made before the damage is the same state, and loads.
  const resumed = await client.createTrainingClientFromState(intact, { withOptimizer: true });
  assert.equal((await resumed.forward(batch, 'cross_entropy')).metrics['loss:sum'], lossBefore);
  assert.deepEqual(log.filter((l) => /^error on/.test(l)), [], 'no 500 on the way');
});

test('a state whose weights.bin or meta.json changed is refused naming the checkpoint and the file', { timeout: 120_000 }, async () => {
  for (const file of ['weights.bin', 'meta.json']) {
    const uri = await tc.saveState(`damaged-${file.replace('.', '-')}`);
    damage(uri, file);
    const err = await client.createTrainingClientFromState(uri).then(() => 'loaded', (e: unknown) => e);
    assert.notEqual(err, 'loaded', `a state with a damaged ${file} was loaded`);
    checkRefusal(err, uri, file);
  }
  assert.deepEqual(log.filter((l) => /^error on/.test(l)), [], 'no 500 on the way');
});

test('sampler weights whose weights.bin changed are refused when a sampling session is opened on them', { timeout: 120_000 }, async () => {
  const intact = copyCheckpoint(samplerPath, 'step-1-copy');
  damage(samplerPath, 'weights.bin');
  const started = Date.now();
  const err = await client.createSamplingClient({ modelPath: samplerPath }).then(() => 'opened', (e: unknown) => e);
  assert.notEqual(err, 'opened', 'a sampling session was opened on damaged sampler weights');
  checkRefusal(err, samplerPath, 'weights.bin');
  assert.ok(Date.now() - started < 5_000, `refused at once (${Date.now() - started} ms)`);
  const ok = await client.createSamplingClient({ modelPath: intact });
  assert.equal((await ok.sample([...Buffer.from('Hi')], 1, { maxTokens: 4, seed: 1 })).sequences.length, 1);
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/api/v1/healthz`)).status, 200, 'the trainer is healthy');
  assert.deepEqual(log.filter((l) => /^error on/.test(l)), [], 'no 500 on the way');
});
