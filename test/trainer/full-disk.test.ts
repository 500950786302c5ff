// The trainer on a full disk: its data directory on a small volume of its own (a tmpfs, as root),
// filled up. A save then fails at once with category "user" (which no client retries: the disk stays full until an
// operator frees it), in one line naming the path under the data directory and the bytes free; it leaves nothing
// partial (no half checkpoint, no temporary directory); a sampling session that must be written down is refused the
// same way; health answers 503 disk_full with the reason. Once the space is freed, health is ok again by itself and
// the same save succeeds and loads. test/store/full-disk.test.ts is the store's equivalent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { RequestFailedError, ServiceClient, TinkerApiError, type TrainingClient } from '../../tinker';
import type { TrainerServer } from '../../trainer/server/server';
import { mountSmallVolume, type SmallVolume } from '../helpers/small-volume';
import { TEST_MODEL, startTestTrainer, textDatum } from '../tinker/helpers';

const batch = [textDatum('Hello, world!\n')];
let vol: SmallVolume;
let server: TrainerServer;
let client: ServiceClient;
let tc: TrainingClient;
let base = '';

interface Health { status: string; detail?: string; volume_free_bytes?: number; disk?: { volume_free_bytes: number } }
const health = async (): Promise<{ code: number; body: Health }> => {
  const r = await fetch(`${base}/api/v1/healthz`);
  return { code: r.status, body: (await r.json()) as Health };
};

/** Every file and folder under `dir`, relative (the filler of the volume left out). */
function tree(dir: string, under = ''): string[] {
  return readdirSync(path.join(dir, under), { withFileTypes: true }).flatMap((e) => {
    const rel = under ? `${under}/${e.name}` : e.name;
    if (rel === 'filler') return [];
    return e.isDirectory() ? [`${rel}/`, ...tree(dir, rel)] : [rel];
  });
}

before(async () => {
  // 8 MiB: room for a few checkpoints of the test model (about 0.3 MiB each), and well over the 1 MiB under which
  // the trainer counts a disk that failed a write as still full.
  vol = mountSmallVolume(8 * 1024 * 1024);
  server = await startTestTrainer({ dataDir: vol.dir, port: 0, log: () => {} });
  base = `http://127.0.0.1:${server.port}`;
  client = new ServiceClient({ baseUrl: base, apiKey: 'tml-local', futureTimeoutMs: 60_000 });
  tc = await client.createLoraTrainingClient(TEST_MODEL, { seed: 4 });
  await tc.forwardBackward(batch, 'cross_entropy');
  await tc.optimStep({ learningRate: 0.1 });
});

after(async () => {
  await client?.close().catch(() => undefined);
  await server?.close();
  vol?.unmount();
});

test('a full disk: the save fails as a user error naming the path and the free bytes, leaves nothing, health says disk_full; freed, it saves again', { timeout: 120_000 }, async () => {
  const before = await tc.saveState('before');
  assert.deepEqual((await health()).body.status, 'ok');
  const treeBefore = tree(vol.dir);

  vol.fill();
  const free = vol.freeBytes();
  const started = Date.now();
  const err = await tc.saveState('while-full').then(() => 'saved', (e: unknown) => e);
  const ms = Date.now() - started;
  assert.notEqual(err, 'saved', `the save went through on a full disk (${free} bytes free)`);
  assert.ok(err instanceof RequestFailedError, String(err));
  assert.equal(err.category, 'user', `a full disk is not retried: ${err.message}`);
  assert.ok(ms < 5_000, `failed at once (${ms} ms)`);
  const message = err.message;
  process.stderr.write(`save on a full disk failed in ${ms} ms: ${message}\n`);
  assert.ok(!message.includes('\n'), `one line: ${message}`);
  assert.match(message, /the trainer's disk is full/);
  assert.ok(message.includes(`writing runs/${tc.modelId}/weights/while-full`), `names the path under the data directory: ${message}`);
  assert.match(message, /\(ENOSPC\); \d+ bytes free/, 'names the free bytes');
  assert.ok(!message.includes(vol.dir), `no absolute path of the trainer's machine: ${message}`);
  assert.deepEqual(tree(vol.dir), treeBefore, 'nothing partial is left on the disk');

  // The trainer's health says so, with the reason, while the disk stays full.
  const full = await health();
  assert.equal(full.code, 503);
  assert.equal(full.body.status, 'disk_full', JSON.stringify(full.body));
  assert.match(full.body.detail ?? '', /the trainer's disk is full: writing runs\/.*\/weights\/while-full/);
  assert.equal(typeof full.body.volume_free_bytes, 'number');
  assert.ok(full.body.volume_free_bytes! < 1 << 20, JSON.stringify(full.body));

  // Sampler weights the same.
  const samplerErr = await tc.saveWeightsForSampler('while-full').then(() => 'saved', (e: unknown) => e);
  assert.ok(samplerErr instanceof RequestFailedError && samplerErr.category === 'user', String(samplerErr));
  assert.match(samplerErr.message, new RegExp(`the trainer's disk is full: writing runs/${tc.modelId}/sampler_weights/while-full .*\\(ENOSPC\\); \\d+ bytes free`));

  // A sampling session on a path is written down (sampling-sessions.jsonl): refused the same way, at once, as a 4xx
  // that says not to retry.
  const sampling = await client.createSamplingClient({ modelPath: before }).then(() => 'opened', (e: unknown) => e);
  assert.ok(sampling instanceof TinkerApiError, String(sampling));
  assert.equal(sampling.status, 400, sampling.body);
  assert.equal(sampling.isUserError, true);
  const body = JSON.parse(sampling.body) as { error: string; category: string };
  assert.equal(body.category, 'user');
  assert.match(body.error, /the trainer's disk is full: writing sampling-sessions\.jsonl under its data directory failed \(ENOSPC\); \d+ bytes free/);
  // What is new on the disk holds nothing: the parent folder of sampler weights (a folder takes no data blocks on this
  // volume, so its mkdir went through) and an empty sessions file (its append wrote nothing); no checkpoint, no temporary.
  const added = tree(vol.dir).filter((f) => !treeBefore.includes(f));
  for (const f of added) {
    assert.doesNotMatch(f, /while-full|\.tmp/, `nothing partial is left on the disk: ${added.join(', ')}`);
    if (!f.endsWith('/')) assert.equal(statSync(path.join(vol.dir, f)).size, 0, `${f} is empty`);
  }
  assert.equal((await health()).body.status, 'disk_full');

  // An operator frees space: health is ok again by itself, and the same save goes through and loads.
  vol.free();
  const freed = await health();
  assert.equal(freed.code, 200, JSON.stringify(freed.body));
  assert.equal(freed.body.status, 'ok');
  const saved = await tc.saveState('while-full');
  assert.equal(saved, `tinker://${tc.modelId}/weights/while-full`);
  const loss = (await tc.forward(batch, 'cross_entropy')).metrics['loss:sum'];
  const resumed = await client.createTrainingClientFromState(saved, { withOptimizer: true });
  assert.equal((await resumed.forward(batch, 'cross_entropy')).metrics['loss:sum'], loss);
  const sampler = await client.createSamplingClient({ modelPath: saved });
  assert.equal((await sampler.sample([...Buffer.from('Hi')], 1, { maxTokens: 4, seed: 1 })).sequences.length, 1);
  assert.equal((await health()).body.status, 'ok');
});
