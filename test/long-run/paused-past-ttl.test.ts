// A run paused for longer than every TTL it set, whose worker and trainer then restart, resumes and finishes:
// the state it resumes from carries no expiry. The trainer comes back "ten days later" (its checkpoint clock moved
// by AGL_TRAINER_CLOCK_OFFSET_SECONDS), sweeps what expired, and the run goes on from its live state. What
// expired is checked on the trainer's disk: superseded per-step states are gone, the live one and the rows'
// checkpoints are what is left. Then a run with a short retainSteps: its per-step states go by count, not by the hour.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Stack } from '../../dev/stack';
import { localRunConfig, startTestStack } from '../helpers/local-run';
import { readJsonl, runPaths } from '../../records/run-files';
import { startOrAttach } from '../../cli/run-commands';
import { client as runClient } from '../helpers/commands';
import { pauseSignal, progressQuery, resumeSignal } from '../../workflows/messages';
import { parseTinkerPath } from '../../trainer/server/checkpoints';
import type { StepRecord } from '../../activities/step-records';
import { StoreClient } from '../../store/client';
import type { trainingRun } from '../../workflows/training-run';

const TEN_DAYS_S = 10 * 24 * 3600;
let stack: Stack | undefined;
let client: Client;
let dataDir = '';
let taskQueue = '';

before(async () => {
  ({ stack, dataDir, taskQueue } = await startTestStack('long-pause', { agent: 'hello-dense' }));
  client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
});

after(async () => {
  // An open connection keeps the file's process alive (minutes of gRPC retries) after the server is gone.
  await client?.connection.close();
  await stack?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => Promise<boolean>, what: string, ms = 180_000): Promise<void> {
  const end = Date.now() + ms;
  let last: unknown;
  while (!(await check().catch((err: unknown) => ((last = err), false)))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await sleep(250);
  }
}
/** The step records (after initPolicy's) of the run's instance, by step. */
async function stepRecordsOf(storeUrl: string, runName: string): Promise<StepRecord[]> {
  const store = new StoreClient(storeUrl);
  const run = (await store.runsWithRecords()).find((r) => r.run.startsWith(`${runName}@`) && r.kind === 'step')!.run;
  const recs = await store.runRecords(run, { kind: 'step', limit: 1000 });
  return recs.filter((r) => r.key !== 'initial').sort((a, b) => a.step - b.step || a.seq - b.seq).map((r) => JSON.parse(r.body) as StepRecord);
}

/** The apparent size of the files under `p` (as the trainer and store count it, not disk blocks). */
function bytesUnder(p: string): number {
  const st = lstatSync(p);
  return st.isDirectory() ? readdirSync(p).reduce((n, name) => n + bytesUnder(path.join(p, name)), 0) : st.size;
}

/** Where the local trainer keeps a tinker:// path. */
const onDisk = (uri: string) => {
  const p = parseTinkerPath(uri);
  return path.join(dataDir, 'trainer', 'runs', p.modelId, p.kind, p.name);
};

test('a run paused past every TTL it set, worker and trainer restarted, resumes from its live state and finishes', { timeout: 600_000 }, async () => {
  const cfg = localRunConfig(stack!, dataDir, 'paused-past-ttl', {
    evalEvery: 0,
    saveEvery: 2,
    // Every TTL this run sets is at most 2 hours; the trainer comes back 10 days later.
    checkpointTtlSeconds: 3600,
    rollingSaveEvery: 3,
    rollingTtlSeconds: 3600,
    activityHeartbeatTimeoutSeconds: 10,
    datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: Array.from({ length: 24 }, (_, i) => String(i + 1)) },
  });
  const run = await startOrAttach(client, taskQueue, cfg);
  // The chain's latest run, whatever continue-as-new did.
  const h = client.workflow.getHandle<typeof trainingRun>(run.handle.workflowId);
  await until(async () => (await h.query(progressQuery)).batch >= 3, 'batch 3');
  await h.signal(pauseSignal);
  await until(async () => {
    const p = await h.query(progressQuery);
    return p.paused && p.phase === 'paused';
  }, 'the run to stand paused');
  const paused = await h.query(progressQuery);

  // Disk use behind the run, read after each step, in `client status`; checked against the store's
  // and the trainer's directories measured here (nothing writes while the run stands paused; the trainer's
  // figure may be up to 10 s older than the last step).
  const disk = paused.disk!;
  assert.equal(disk?.atStep, paused.batch - 1, 'disk use read after the last step');
  const storeNow = bytesUnder(path.join(dataDir, 'store'));
  // (the store gives freed pages back every 10 s, so its files may have shrunk a little since)
  assert.ok(disk.store!.bytes > 0.5 * storeNow && disk.store!.bytes < 1.5 * storeNow, `store ${disk.store!.bytes} B against ${storeNow} B on disk`);
  const trainerNow = bytesUnder(path.join(dataDir, 'trainer'));
  assert.ok(disk.trainer!.bytes > 0.3 * trainerNow && disk.trainer!.bytes <= trainerNow, `trainer ${disk.trainer!.bytes} B against ${trainerNow} B on disk`);
  const volume = statfsSync(dataDir);
  assert.ok(Math.abs(disk.trainer!.volumeFreeBytes - volume.bavail * volume.bsize) < 2 ** 30, `room left on the trainer's volume: ${disk.trainer!.volumeFreeBytes} B`);
  const status = await runClient(['status', 'paused-past-ttl'], { ...process.env, TEMPORAL_ADDRESS: stack!.temporal.address, TEMPORAL_NAMESPACE: 'default', AGL_TASK_QUEUE: taskQueue });
  assert.equal(status.code, 0, status.stdout + status.stderr);
  assert.match(status.stdout, new RegExp(`^disk after batch ${paused.batch - 1}: store [\\d.]+ [KM]iB, trainer [\\d.]+ [KMG]iB \\([\\d.]+ [KMG]iB free\\)$`, 'm'));

  const steps = await stepRecordsOf(stack!.storeUrl, 'paused-past-ttl');
  const live = steps[steps.length - 1]!.result.state;
  assert.equal(live.step, paused.batch, 'the last committed step is the parent of the batch the run waits to start');
  const superseded = steps.slice(0, -1).map((s) => s.result.state).filter((s) => s.statePath !== live.statePath);
  assert.ok(superseded.length >= 3, `states superseded before the pause: ${superseded.length}`);
  const named = new Set(readJsonl(runPaths(cfg.logPath).checkpoints).flatMap((r) => [r.state_path, r.sampler_path]));
  const unnamed = superseded.filter((s) => !named.has(s.statePath));
  assert.ok(unnamed.length >= 1, 'some superseded state no checkpoint row names');
  const rolling = readJsonl(runPaths(cfg.logPath).checkpoints).filter((r) => r.rolling);
  assert.ok(rolling.length >= 1, 'a rolling row (step 3)');
  assert.notEqual(rolling[0]!.state_path, steps.find((s) => s.result.state.step === 3)!.result.state.statePath, 'a rolling checkpoint is a save of its own, not the live state');
  for (const s of [live.statePath, live.samplerPath, ...unnamed.map((u) => u.statePath)]) assert.ok(existsSync(onDisk(s)), `${s} on disk before the pause ends`);

  // Ten days pass: the trainer and the worker restart, the trainer with its checkpoint clock moved on.
  const trainer = stack!.services.trainer;
  trainer.spec.env = { ...trainer.spec.env, AGL_TRAINER_CLOCK_OFFSET_SECONDS: String(TEN_DAYS_S) };
  trainer.crash();
  stack!.services.worker.crash();
  await sleep(1000);
  await trainer.whenUp();
  // The restarted trainer swept what expired: the superseded states and the rolling one (these files going
  // proves its clock moved past the TTLs), not the live state and sampler the run resumes from.
  await until(async () => !existsSync(onDisk(unnamed[0]!.statePath)), 'the trainer to sweep the expired states', 60_000);
  for (const u of unnamed) assert.ok(!existsSync(onDisk(u.statePath)), `superseded ${u.statePath} expired and was deleted`);
  assert.ok(!existsSync(onDisk(String(rolling[0]!.state_path))), 'the rolling checkpoint expired and was deleted');
  assert.ok(existsSync(onDisk(live.statePath)), 'the live state outlived every TTL');
  assert.ok(existsSync(onDisk(live.samplerPath)), 'the live sampler outlived every TTL');
  await stack!.services.worker.whenUp();

  await h.signal(resumeSignal);
  // The deadline's timer is cleared: left pending, it would hold the file's process open for its 4 minutes.
  let deadline: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    h.result(),
    new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new Error('the resumed run did not finish within 4 min (its parent state gone?)')), 240_000);
    }),
  ]).finally(() => clearTimeout(deadline));
  assert.equal(result.stoppedEarly, false);
  assert.equal(result.batchesCompleted, result.numBatches, 'every batch ran');
  assert.ok(result.numBatches >= paused.batch + 2, `batches after the pause: ${result.numBatches - paused.batch}`);
  assert.deepEqual(readJsonl(runPaths(cfg.logPath).metrics).map((m) => m.step), Array.from({ length: result.numBatches }, (_, i) => i), 'one metrics row per batch');
  const after = await stepRecordsOf(stack!.storeUrl, 'paused-past-ttl');
  const resumed = after.find((s) => s.parentStatePath === live.statePath);
  assert.ok(resumed && !resumed.result.skipped, 'the first step after the pause trained from the live state');
  assert.ok(existsSync(onDisk(after[after.length - 1]!.result.state.statePath)), 'the final state is on disk');
});

test('a per-step state and sampler no row names is deleted once retainSteps newer steps committed, not an hour later', { timeout: 300_000 }, async () => {
  const cfg = localRunConfig(stack!, dataDir, 'retain-window', {
    evalEvery: 0,
    saveEvery: 3,
    retainSteps: 2,
    datasetBuilder: { batchSize: 2, groupSize: 2, trainDataset: Array.from({ length: 14 }, (_, i) => String(i + 1)), valDataset: ['0'] },
  });
  const run = await startOrAttach(client, taskQueue, cfg);
  const result = await client.workflow.getHandle<typeof trainingRun>(run.handle.workflowId).result();
  assert.equal(result.batchesCompleted, 7);
  // Read from the trainer's disk: the store keeps commit records of the retained steps only.
  const final = (await stepRecordsOf(stack!.storeUrl, 'retain-window')).at(-1)!.result.state;
  assert.equal(final.step, 7);
  const rows = readJsonl(runPaths(cfg.logPath).checkpoints);
  const namedNames = (kind: string) => rows.map((r) => parseTinkerPath(r[kind === 'weights' ? 'state_path' : 'sampler_path'])).map((p) => p.name);
  assert.ok(namedNames('weights').some((n) => Number(n) < 6), 'a saveEvery row names a step that fell out of the window');
  for (const kind of ['weights', 'sampler_weights']) {
    const left = readdirSync(path.join(dataDir, 'trainer', 'runs', final.modelId, kind)).filter((n) => !n.includes('.tmp-')).sort();
    // Step 7 is the final one and 6 is within 2 steps of it; rows name some others: those stay, steps 0-5 go.
    const expected = [...new Set(['000006', '000007', ...namedNames(kind)])].sort();
    assert.deepEqual(left, expected, `${kind} on the trainer`);
  }
});
