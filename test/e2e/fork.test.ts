// Forking a run (cli/fork-command.ts, activities/fork-state.ts) on a real stack: a fork with no changes started
// while its parent runs retrains the parent's later steps bit for bit (the weights each step saved on the local
// trainer), a fork with another learning rate samples the same first batch and then trains other weights, its
// lineage is in its search attributes and memo, and a fork from a step whose checkpoint is gone is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import type { Stack } from '../../dev/stack';
import { localRunInput, startTestStack } from '../helpers/local-run';
import { stepRecordsOf } from '../helpers/run-records';
import { readJsonl, runPaths } from '../../records/run-files';
import { runHandle, startOrAttach } from '../../cli/run-commands';
import { forkConfig, parentOf } from '../../cli/fork-command';
import { validateRunConfig } from '../../config/load';
import { weightsOf } from '../chaos/harness';
import { tinkerService } from '../../activities/services';
import { runCommand } from '../helpers/commands';

const temporalArgs = () => ['--address', stack!.temporal.address, '--task-queue', taskQueue];

let stack: Stack | undefined;
let client: Client;
let dataDir = '';
let taskQueue = '';

before(async () => {
  // Partial-credit rewards, so every step really moves the weights of the tiny model (otherwise all rewards are 0).
  ({ stack, dataDir, taskQueue } = await startTestStack('fork', { agent: 'hello-dense' }));
  client = new Client({ connection: await Connection.connect({ address: stack.temporal.address, connectTimeout: '60 seconds' }) });
});

after(async () => {
  await stack?.stop();
});

const NUM_BATCHES = 4;
const FORK_STEP = 2;
const trainerDir = () => path.join(dataDir, 'trainer');

/** sha256 of the weights each committed step saved, by the step the state is after. */
async function stepWeights(runName: string): Promise<Map<number, string>> {
  return new Map((await stepRecordsOf(stack!.storeUrl, runName)).map((r) => [r.result.state.step, weightsOf(trainerDir(), r.result.state.statePath).sha256]));
}

const metricsOf = (logPath: string) =>
  readJsonl(runPaths(logPath).metrics).map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('time/'))));

test('a fork at step K reproduces its parent from K bit for bit; a changed learning rate changes only the training', { timeout: 15 * 60_000 }, async () => {
  const input = localRunInput(stack!, dataDir, 'parent', {
    evalEvery: 0,
    saveEvery: 0,
    datasetBuilder: { batchSize: 3, groupSize: 2, trainDataset: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'], valDataset: ['500'] },
  });
  const parentRun = await startOrAttach(client, taskQueue, validateRunConfig(input));
  // Fork while the parent still runs: once its step FORK_STEP is committed.
  for (;;) {
    const recs = await stepRecordsOf(stack!.storeUrl, 'parent').catch(() => []);
    if (recs.some((r) => r.result.state.step >= FORK_STEP)) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  const { config, runKey } = await parentOf(runHandle(client, 'parent'));
  assert.match(runKey, /^parent@.+/);
  const same = forkConfig(config, runKey, FORK_STEP, 'fork-same', {});
  assert.equal(same.logPath, path.join(dataDir, 'runs', 'fork-same'), "a fork's files sit beside its parent's");
  // The other fork as a user starts it: the client command.
  const cli = await runCommand('client.ts', ['fork', 'parent', '--from-step', String(FORK_STEP), '--name', 'fork-lr', '--set', 'learningRate=0.01', ...temporalArgs()]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /^started agl-run-fork-lr: a fork of parent@\S+ after step 2 with \{"learningRate":0.01\}/);
  const lr = { logPath: path.join(dataDir, 'runs', 'fork-lr') };
  const forks = [await startOrAttach(client, taskQueue, same), { handle: runHandle(client, 'fork-lr') }];
  const [parentResult, sameResult, lrResult] = await Promise.all([parentRun.handle.result(), ...forks.map((f) => f.handle.result())]);
  assert.equal(parentResult.batchesCompleted, NUM_BATCHES, 'the parent ran to its end, undisturbed by its forks');
  assert.equal(sameResult.batchesCompleted, NUM_BATCHES);
  assert.equal(lrResult.batchesCompleted, NUM_BATCHES);

  const parentW = await stepWeights('parent');
  const sameW = await stepWeights('fork-same');
  const lrW = await stepWeights('fork-lr');
  assert.notEqual(parentW.get(3), parentW.get(2), 'the parent really trained at step 3 (else equal weights would prove nothing)');
  assert.notEqual(parentW.get(4), parentW.get(3), 'and at step 4');
  assert.deepEqual([...sameW.keys()].sort(), [3, 4], 'the fork committed steps K+1.. only (its start is the parent state, not retrained)');
  for (const step of [3, 4]) assert.equal(sameW.get(step), parentW.get(step), `fork-same: weights after step ${step} are the parent's`);
  for (const step of [3, 4]) assert.notEqual(lrW.get(step), parentW.get(step), `fork-lr: weights after step ${step} differ (lr 1e-2)`);

  const parentFinal = readJsonl(runPaths(path.join(dataDir, 'runs', 'parent')).checkpoints).find((c) => c.name === 'final')!;
  const sameFinal = readJsonl(runPaths(same.logPath).checkpoints).find((c) => c.name === 'final')!;
  const pf = weightsOf(trainerDir(), String(parentFinal.state_path));
  const sf = weightsOf(trainerDir(), String(sameFinal.state_path));
  assert.deepEqual(sf, pf, 'final weights and Adam step count identical');

  const parentM = metricsOf(path.join(dataDir, 'runs', 'parent'));
  const sameM = metricsOf(same.logPath);
  assert.deepEqual(sameM.map((m) => m.step), [2, 3]);
  assert.deepEqual(sameM, parentM.slice(FORK_STEP), 'fork-same: metrics rows of steps 2.. as the parent (sampling, rewards, loss)');
  // The changed learning rate: the batch at the fork step samples from the same state, so its rollouts are the
  // parent's; what trains on them differs.
  const lrM = metricsOf(lr.logPath);
  assert.equal(lrM[0]!['optim/lr'], 1e-2);
  for (const key of Object.keys(parentM[FORK_STEP]!).filter((k) => k.startsWith('env/'))) {
    assert.deepEqual(lrM[0]![key], parentM[FORK_STEP]![key], `fork-lr: ${key} at the fork step as the parent`);
  }

  // Lineage: search attributes and memo, as `client list` and the UI show them.
  const d = await forks[1]!.handle.describe();
  const sa = d.searchAttributes as Record<string, unknown[]>;
  assert.deepEqual(sa.AglParentRun, [runKey]);
  assert.deepEqual(sa.AglForkStep, [FORK_STEP]);
  assert.deepEqual((await d.memo)?.forkOf, { run: runKey, step: FORK_STEP });
  const list = await runCommand('client.ts', ['list', ...temporalArgs()]);
  assert.match(list.stdout, new RegExp(`^agl-run-fork-lr\\tCOMPLETED\\t.*\\tfork of ${runKey} at step 2\\t`, 'm'), list.stdout);
  assert.doesNotMatch(list.stdout, /^agl-run-parent\t.*fork of/m, 'the parent is no fork');

  // A fork from a step whose checkpoint is gone from the trainer is refused, with the reason.
  const gone = (await stepRecordsOf(stack!.storeUrl, 'parent')).find((r) => r.result.state.step === 1)!.result.state.statePath;
  await tinkerService(stack!.trainerUrl).deleteCheckpoint(gone);
  const refused = await startOrAttach(client, taskQueue, forkConfig(config, runKey, 1, 'fork-gone', {}));
  const err = await refused.handle.result().then(() => null, (e: unknown) => e);
  assert.ok(err instanceof WorkflowFailedError, 'the fork from a deleted checkpoint failed');
  const cause = err.cause as (Error & { cause?: Error }) | undefined;
  const why = String(cause?.cause?.message ?? cause?.message);
  assert.match(why, /after step 1 .* is gone from the trainer/, why);
});
